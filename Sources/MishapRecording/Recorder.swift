import MishapEngine
import MishapSupport
import MishapUpstream
import Synchronization

/// Writes down the upstream's answers as scenario files while Mishap passes requests on
/// (`mishap record`): the first answer to each distinct request (method, path and query, as a
/// rule's `when` tells queries apart) becomes a rule of its endpoint's file; a request seen
/// before is counted as a repeat and not recorded again. Calls without an answer (the upstream
/// down or slow) are not recorded. Safe to call from any thread.
///
/// Recording a request costs the same however many its endpoint has (tables, under one lock,
/// held briefly); a body file is written by the request's thread outside the lock. The
/// scenario files, rewritten whole (so a file always loads), are written by a thread of their
/// own (`CoalescingWorker`) within `writeInterval` of the answer: at most once per interval
/// each, however many requests come, so a large endpoint costs a rewrite per interval, not per
/// request. `flush()` writes everything recorded so far and returns when it is on disk (`mishap
/// record` calls it when it stops, so Ctrl-C loses nothing).
public final class Recorder: Sendable {
    /// How soon after an answer its rule is in its file, and how often a file is rewritten at most.
    public static let writeInterval: Int64 = 100_000_000  // nanoseconds

    /// Something worth a log line.
    public struct Event: Sendable, Equatable {
        public enum Level: Sendable, Equatable {
            /// A repeat, not recorded again.
            case debug
            /// A request recorded.
            case info
            /// A request, or a header, left out, once per endpoint or header name.
            case warning
            /// A file that could not be written.
            case error
        }

        /// How much it matters.
        public var level: Level
        /// The log line, without the level.
        public var message: String
    }

    /// What has been recorded so far.
    public struct Summary: Sendable, Equatable {
        /// Requests recorded: rules written.
        public var requests: Int
        /// Scenario files written: endpoints.
        public var files: Int
        /// Requests answered again by the upstream but not recorded again.
        public var repeats: Int

        /// A summary of these counts.
        public init(requests: Int, files: Int, repeats: Int) {
            self.requests = requests
            self.files = files
            self.repeats = repeats
        }
    }

    /// One endpoint as recording it needs: which queries and rule names are taken, and about
    /// how large its file is. A class, so that changing it changes the table's in place (a
    /// struct copied out of the table would make the next insert copy its sets whole).
    private final class Ledger {
        let fileStem: String
        var queries: Set<RecordedQuery> = []
        var ruleNames: Set<String> = []
        /// The bytes of its file's heading (`ScenarioWriter.render` of it without rules).
        let headingSize: Int
        /// The bytes of its file: the heading, and each rule's lines.
        var fileSize: Int
        /// Rules recorded: its file is counted with the first.
        var rules = 0

        init(fileStem: String, headingSize: Int) {
            self.fileStem = fileStem
            self.headingSize = headingSize
            fileSize = headingSize
        }
    }

    private struct State {
        var endpoints: [String: Ledger] = [:]
        /// File stems in use, in lower case.
        var stems: Set<String> = []
        var summary = Summary(requests: 0, files: 0, repeats: 0)
        /// Endpoints and header names already warned of, so a warning is logged once.
        var warned: Set<String> = []
        /// Rules recorded and not yet handed to the file thread, in recording order.
        var pending: [(method: String, path: String, fileStem: String, rule: RecordedRule)] = []
    }

    /// Writes the files.
    public let writer: ScenarioWriter
    /// Says which headers are kept.
    public let headers: HeaderSelection
    private let shared: Shared
    private let log: @Sendable (Event) -> Void
    /// Writes the files of the rules pending, off the answering threads.
    private let fileThread: CoalescingWorker

    /// What the answering threads and the file thread share.
    private final class Shared: Sendable {
        let state = Mutex(State())
        /// The endpoints as their files hold them, by declaration: the file thread's alone.
        let files = Mutex<[String: RecordedEndpoint]>([:])
        let writer: ScenarioWriter
        let log: @Sendable (Event) -> Void

        init(writer: ScenarioWriter, log: @escaping @Sendable (Event) -> Void) {
            self.writer = writer
            self.log = log
        }

        /// On the file thread: adds the rules pending to their endpoints and writes each
        /// endpoint that changed, once.
        func writePending() {
            let pending = state.withLock { state in
                var taken: [(method: String, path: String, fileStem: String, rule: RecordedRule)] = []
                swap(&taken, &state.pending)
                return taken
            }
            guard !pending.isEmpty else { return }
            files.withLock { files in
                var changed: [String] = []
                var seen: Set<String> = []
                for item in pending {
                    let declaration = "\(item.method) \(item.path)"
                    if files[declaration] == nil {
                        files[declaration] = RecordedEndpoint(method: item.method, path: item.path, fileStem: item.fileStem)
                    }
                    if seen.insert(declaration).inserted { changed.append(declaration) }
                    files[declaration]!.insert(item.rule)
                }
                for declaration in changed {
                    do throws(ScenarioWriter.WriteFailure) {
                        try writer.write(files[declaration]!)
                    } catch {
                        log(Event(level: .error, message: "cannot write the recording of \(declaration): \(error)"))
                    }
                }
            }
        }
    }

    /// A recorder writing with `writer`, keeping headers as `headers` says, telling `log` what
    /// it does.
    public init(writer: ScenarioWriter, headers: HeaderSelection = HeaderSelection(),
                log: @escaping @Sendable (Event) -> Void = { _ in }) {
        self.writer = writer
        self.headers = headers
        self.log = log
        let shared = Shared(writer: writer, log: log)
        self.shared = shared
        fileThread = CoalescingWorker(intervalNanoseconds: Self.writeInterval) { shared.writePending() }
    }

    /// What has been recorded so far.
    public var summary: Summary { shared.state.withLock { $0.summary } }

    /// Returns once every request recorded so far is in its file.
    public func flush() {
        fileThread.flush()
    }

    /// Records the upstream's answer to `request`, unless one was recorded for the same request
    /// already or the call brought no answer. Fits `ServiceOptions.upstreamAnswers`.
    public func record(_ request: Request, _ result: UpstreamResult) {
        guard case .answered(let status, let upstreamHeaders, let body, _) = result else { return }
        let declaration = "\(request.method) \(request.path)"
        let query: RecordedQuery
        do throws(Unrecordable) {
            if let problem = RecordedEndpoint.problem(method: request.method, path: request.path) { throw problem }
            query = try RecordedQuery(request.query)
            guard (100...599).contains(status) else {
                throw Unrecordable("the upstream answered with status \(status), which a scenario file cannot declare")
            }
        } catch {
            warnOnce("request:" + declaration, "not recording \(declaration): \(error.reason)")
            return
        }
        let fields = upstreamHeaders.map { Field($0.name, $0.value) }
        let contentType = fields.first { $0.name.lowercased() == "content-type" }?.value
        let inline = ScenarioWriter.inlineBody(body)
        // The query and a rule name are taken at once, so a repeat arriving meanwhile is one.
        let taken: (name: String, ledger: Ledger)? = shared.state.withLock { state in
            let ledger: Ledger
            if let known = state.endpoints[declaration] {
                ledger = known
            } else {
                let stem = RecordingNames.unique(RecordingNames.fileStem(method: request.method, path: request.path), in: state.stems)
                ledger = Ledger(fileStem: stem, headingSize: writer.render(
                    RecordedEndpoint(method: request.method, path: request.path, fileStem: stem)).utf8.count)
                state.endpoints[declaration] = ledger
                state.stems.insert(stem.lowercased())
            }
            guard ledger.queries.insert(query).inserted else {
                state.summary.repeats += 1
                return nil
            }
            let name = RecordingNames.unique(query.ruleName, in: ledger.ruleNames)
            ledger.ruleNames.insert(name.lowercased())
            return (name, ledger)
        }
        guard let (name, ledger) = taken else {
            log(Event(level: .debug, message: "\(declaration)\(query.shown) recorded already; not recorded again"))
            return
        }
        var recordedBody = inline
        var addedContentType = "text/plain; charset=utf-8"
        do throws(ScenarioWriter.WriteFailure) {
            if recordedBody == nil {
                let path = "\(ScenarioWriter.bodyFolder)/\(ledger.fileStem).\(name).\(RecordingNames.fileExtension(contentType: contentType))"
                try writer.writeBody(path, body)
                recordedBody = .file(path)
                addedContentType = "application/octet-stream"
            }
        } catch {
            giveBack(query, name: name, of: ledger)
            log(Event(level: .error, message: "not recording \(declaration)\(query.shown): \(error)"))
            return
        }
        let selected = headers.select(fields, addedContentType: addedContentType)
        let rule = RecordedRule(name: name, query: query, status: status, headers: selected.kept, body: recordedBody ?? .empty)
        // The rule's lines alone, to keep the file within what the loader reads.
        let size = writer.render(Self.endpoint(request.method, request.path, ledger.fileStem, with: rule)).utf8.count - ledger.headingSize
        let refusal: String? = shared.state.withLock { state in
            guard ledger.fileSize + size <= ScenarioWriter.maximumFileSize else {
                return "\(ledger.fileStem).yaml would be over the \(ScenarioWriter.maximumFileSize) bytes a scenario file may take"
            }
            ledger.fileSize += size
            ledger.rules += 1
            if ledger.rules == 1 { state.summary.files += 1 }
            for leftOut in selected.leftOut where state.warned.insert("header:" + leftOut.name.lowercased()).inserted {
                log(Event(level: .warning, message: "left out the header \(leftOut.name) (of \(declaration)\(query.shown), and of any answer after it): \(leftOut.reason)"))
            }
            state.pending.append((request.method, request.path, ledger.fileStem, rule))
            state.summary.requests += 1
            return nil
        }
        if let refusal {
            giveBack(query, name: name, of: ledger)
            log(Event(level: .error, message: "not recording \(declaration)\(query.shown): \(refusal)"))
            return
        }
        fileThread.request()
        log(Event(level: .info, message: "recorded \(declaration)\(query.shown): \(status) as rule '\(name)' of \(ledger.fileStem).yaml"))
    }

    /// Frees the query and rule name taken for a request that could not be recorded after all.
    private func giveBack(_ query: RecordedQuery, name: String, of ledger: Ledger) {
        shared.state.withLock { _ in
            ledger.queries.remove(query)
            ledger.ruleNames.remove(name.lowercased())
        }
    }

    /// An endpoint of one rule.
    private static func endpoint(_ method: String, _ path: String, _ fileStem: String, with rule: RecordedRule) -> RecordedEndpoint {
        var endpoint = RecordedEndpoint(method: method, path: path, fileStem: fileStem)
        endpoint.insert(rule)
        return endpoint
    }

    /// Logs `message` as a warning the first time `key` is seen.
    private func warnOnce(_ key: String, _ message: String) {
        if shared.state.withLock({ $0.warned.insert(key).inserted }) { log(Event(level: .warning, message: message)) }
    }
}
