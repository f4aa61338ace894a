import MishapEngine
import MishapHTTP
import MishapSupport

// Requests whose body never came whole (a client that sends a head with `Content-Length` and
// then nothing, as libcurl does when it re-sends a POST on a reused connection that was reset):
// never answered, so the responder never saw them; the server tells them here instead.
extension MishapService {
    /// Journals `request` with what arrived (its method, path, query, headers and the body so
    /// far, with `bodyIncomplete`; no status; closed early; its session as an answered one
    /// would have it), unless it is an admin call, which the journal never keeps, and logs its
    /// line (`bodyIncomplete=true`).
    public func incomplete(_ request: Request, record: CompletedRequest) {
        if journal.capacity > 0 && !(options.admin && request.path.hasUTF8Prefix(AdminAPI.prefixBytes)) {
            var kept = request
            if let prefix = options.sessionPrefix,
               case .some(.some(let rewritten)) = SessionPath.rewrite(request, prefix: prefix, sessionHeader: options.engine.sessionHeader) {
                kept = rewritten
            }
            var entry = JournalEntry(
                id: 0, time: WallClock.nowMilliseconds() - record.durationNanoseconds / 1_000_000, method: kept.method, path: kept.path,
                query: kept.query, headers: kept.headers, body: kept.body, bodySize: kept.body.count,
                session: kept.headerValue(options.engine.sessionHeader), endpoint: nil, rule: nil, status: nil, fault: nil,
                delayMilliseconds: 0, hang: false)
            entry.durationNanoseconds = record.durationNanoseconds
            entry.closedEarly = true
            entry.bodyIncomplete = true
            journal.record(entry)
        }
        completed(record)
    }
}
