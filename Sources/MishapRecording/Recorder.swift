import MishapEngine
import MishapUpstream
import Synchronization

/// Writes down the upstream's answers as scenario files while Mishap passes requests on
/// (`mishap record`): the first answer to each distinct request (method, path and query, as a
/// rule's `when` tells queries apart) becomes a rule of its endpoint's file, written at once;
/// a request seen before is counted as a repeat and not recorded again. Calls without an
/// answer (the upstream down or slow) are not recorded. Safe to call from any thread.
public final class Recorder: Sendable {
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

    private struct State {
        var endpoints: [String: RecordedEndpoint] = [:]
        /// File stems in use, in lower case.
        var stems: Set<String> = []
        var summary = Summary(requests: 0, files: 0, repeats: 0)
        /// Endpoints and header names already warned of, so a warning is logged once.
        var warned: Set<String> = []
    }

    /// Writes the files.
    public let writer: ScenarioWriter
    /// Says which headers are kept.
    public let headers: HeaderSelection
    private let state = Mutex(State())
    private let log: @Sendable (Event) -> Void

    /// A recorder writing with `writer`, keeping headers as `headers` says, telling `log` what
    /// it does.
    public init(writer: ScenarioWriter, headers: HeaderSelection = HeaderSelection(),
                log: @escaping @Sendable (Event) -> Void = { _ in }) {
        self.writer = writer
        self.headers = headers
        self.log = log
    }

    /// What has been recorded so far.
    public var summary: Summary { state.withLock { $0.summary } }

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
        state.withLock { state in
            var endpoint = state.endpoints[declaration] ?? RecordedEndpoint(
                method: request.method, path: request.path,
                fileStem: RecordingNames.unique(RecordingNames.fileStem(method: request.method, path: request.path), in: state.stems))
            if endpoint.rule(for: query) != nil {
                state.summary.repeats += 1
                log(Event(level: .debug, message: "\(declaration)\(query.shown) recorded already; not recorded again"))
                return
            }
            let name = RecordingNames.unique(query.ruleName, in: endpoint.ruleNames)
            let fields = upstreamHeaders.map { Field($0.name, $0.value) }
            let contentType = fields.first { $0.name.lowercased() == "content-type" }?.value
            var recordedBody = ScenarioWriter.inlineBody(body)
            var addedContentType = "text/plain; charset=utf-8"
            do throws(ScenarioWriter.WriteFailure) {
                if recordedBody == nil {
                    let path = "\(ScenarioWriter.bodyFolder)/\(endpoint.fileStem).\(name).\(RecordingNames.fileExtension(contentType: contentType))"
                    try writer.writeBody(path, body)
                    recordedBody = .file(path)
                    addedContentType = "application/octet-stream"
                }
                let selected = headers.select(fields, addedContentType: addedContentType)
                for leftOut in selected.leftOut where state.warned.insert("header:" + leftOut.name.lowercased()).inserted {
                    log(Event(level: .warning, message: "left out the header \(leftOut.name) (of \(declaration)\(query.shown), and of any answer after it): \(leftOut.reason)"))
                }
                endpoint.insert(RecordedRule(name: name, query: query, status: status, headers: selected.kept, body: recordedBody ?? .empty))
                try writer.write(endpoint)
            } catch {
                log(Event(level: .error, message: "not recording \(declaration)\(query.shown): \(error)"))
                return
            }
            if state.endpoints[declaration] == nil {
                state.stems.insert(endpoint.fileStem.lowercased())
                state.summary.files += 1
            }
            state.endpoints[declaration] = endpoint
            state.summary.requests += 1
            log(Event(level: .info, message: "recorded \(declaration)\(query.shown): \(status) as rule '\(name)' of \(endpoint.fileName)"))
        }
    }

    /// Logs `message` as a warning the first time `key` is seen.
    private func warnOnce(_ key: String, _ message: String) {
        if state.withLock({ $0.warned.insert(key).inserted }) { log(Event(level: .warning, message: message)) }
    }
}
