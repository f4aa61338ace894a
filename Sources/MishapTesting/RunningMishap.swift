import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import MishapEngine
import MishapHTTP
import MishapService

/// A running test server.
public final class RunningMishap: @unchecked Sendable {
    /// `http://127.0.0.1:PORT`: give it to the client under test as its base URL.
    public let baseURL: URL
    /// The port listened on, a free one picked at start (two test processes never clash).
    public let port: UInt16
    /// The options the server was started with.
    public let options: MishapOptions
    /// The running parts (service, server, watcher), put together as `mishap serve` does.
    let instance: MishapInstance
    var service: MishapService { instance.service }

    /// Throws `ScenarioError` when the scenarios have problems, and the server's error when it
    /// cannot listen.
    init(scenarios: Mishap.Scenarios, options: MishapOptions) throws {
        self.options = options
        let source: ScenarioSource
        switch scenarios {
        case .directory(let path): source = .directory(path)
        case .yaml(let text, let name): source = .yaml(text, name: name)
        }
        var logger = Logger(label: "mishap.test")
        logger.logLevel = options.logRequests ? .info : .warning
        var service = ServiceOptions(
            engine: EngineOptions(sessionHeader: options.sessionHeader, ruleHeader: options.ruleHeader, seed: options.seed),
            journalSize: options.journalSize, logRequests: options.logRequests, cors: options.cors,
            sessionPrefix: options.sessionPrefix, upstream: options.upstream)
        service.openAPI = options.openAPI
        do {
            instance = try MishapInstance.start(
                MishapInstance.Configuration(scenarios: source, service: service, server: ServerConfiguration(port: 0, threads: options.threads),
                                             watch: options.watch ? .auto : .off),
                logger: logger)
        } catch {
            switch error {
            case .scenarios(let problems): throw problems
            case .server(let failure): throw failure
            case .tls(let failure): throw failure
            }
        }
        port = instance.port
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
    }

    deinit { stop() }

    /// The URL of a path (with its query), e.g. `url("/isUserNameAvailable?userName=x")`.
    public func url(_ pathAndQuery: String) -> URL {
        URL(string: baseURL.absoluteString + pathAndQuery)!
    }

    /// A session of its own for one test; `id` defaults to a fresh unique value.
    public func session(_ id: String = UUID().uuidString) -> MishapSession {
        MishapSession(id: id, headerName: options.sessionHeader, server: self)
    }

    /// Stops at once: no new connections, delayed and hanging requests cut short. Idempotent.
    public func stop() {
        instance.stop()
    }

    // MARK: Inspecting and resetting

    /// The requests the server has received (admin calls excepted), oldest first; each filter
    /// given must match.
    public func requests(path: String? = nil, method: String? = nil, session: MishapSession? = nil,
                         rule: String? = nil, endpoint: String? = nil) -> [RecordedRequest] {
        service.journal.entries(matching: JournalFilter(method: method, path: path, session: session?.id,
                                                        rule: rule, endpoint: endpoint)).entries.map(RecordedRequest.init)
    }

    /// How many requests the journal holds that match every filter given (`header`: a header
    /// the request carried, its name in any case and its value exactly; `bodyContains`: text
    /// in its body), as `GET /__mishap/requests/count` counts them.
    public func count(path: String? = nil, method: String? = nil, session: MishapSession? = nil, rule: String? = nil,
                      endpoint: String? = nil, header: (name: String, value: String)? = nil, bodyContains: String? = nil) -> Int {
        var filter = JournalFilter(method: method, path: path, session: session?.id, rule: rule, endpoint: endpoint)
        filter.header = header
        filter.bodyContains = bodyContains
        return service.journal.entries(matching: filter).entries.count
    }

    /// The requests no rule answered (404s), oldest first, each with the nearest endpoints and
    /// rules and what did not fit: what to print when a stub "does not work".
    public func unmatched(session: MishapSession? = nil) -> [UnmatchedRequest] {
        service.unmatched.list(session: session?.id)
    }

    // MARK: Rules added at runtime

    /// Adds the rules of scenario text (`endpoint:` and `rules:`, or `endpoints:`), tried before
    /// the scenario files' rules: for `session` only (all requests without), for `times`
    /// answers, or `for` a while. Returns the id (`r3`) that `removeRules` takes. Throws the
    /// text's `ScenarioError` (every problem located), or `RuntimeRuleError` for a limit.
    @discardableResult
    public func addRules(yaml text: String, session: MishapSession? = nil, times: Int? = nil, for duration: Duration? = nil) throws -> String {
        try unwrap(service.addRules(yaml: text, session: session?.id, times: times, ttlMilliseconds: duration.map(Self.milliseconds)))
    }

    /// Makes requests to a scenario endpoint (`"POST /login"`) answer with its rule `rule` (a
    /// name or alias, in any case): "the next 3 logins are in maintenance". Returns the id.
    @discardableResult
    public func force(_ endpoint: String, rule: String, session: MishapSession? = nil, times: Int? = nil,
                      for duration: Duration? = nil) throws -> String {
        try unwrap(service.force(endpoint: endpoint, rule: rule, session: session?.id, times: times,
                                 ttlMilliseconds: duration.map(Self.milliseconds)))
    }

    /// Removes rules added at runtime; false when `id` is unknown (used up, expired, reset).
    @discardableResult
    public func removeRules(_ id: String) -> Bool {
        service.runtime.remove(id: id)
    }

    /// The ids of the rules added at runtime that are still in force: all, or a session's.
    public func runtimeRules(session: MishapSession? = nil) -> [String] {
        service.runtime.list(session: session.map { .some($0.id) } ?? .none, now: service.options.engine.clock()).map(\.id)
    }

    private func unwrap(_ result: Result<RuntimeRules.Entry, MishapService.RuntimeRuleError>) throws -> String {
        switch result {
        case .success(let entry): return entry.id
        case .failure(.problems(let problems)): throw problems
        case .failure(let error): throw error
        }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// For each answer that carried `Retry-After`: when the client came back and whether it
    /// waited long enough, oldest first. `.violations` counts the retries that came too early,
    /// as `GET /__mishap/retries` does. Times in seconds (see `RetryCheck`).
    public func retries(session: MishapSession? = nil, endpoint: String? = nil) -> [RetryCheck] {
        service.retries.observations(session: session?.id, endpoint: endpoint).map(RetryCheck.init)
    }

    /// The state values (`state:` in the scenario files) of a session, or of the set shared by
    /// requests without one, by name.
    public func state(session: MishapSession? = nil) -> [String: StateValue] {
        var values: [String: StateValue] = [:]
        for entry in service.stateValues(session: session?.id) { values[entry.declaration.name] = entry.value }
        return values
    }

    /// Sets state values of a session (or of the shared set), for good or, with `for`, until
    /// they revert to their initial values: `try mishap.setState(["searchOutage": true], for: .seconds(30))`.
    /// Throws `StateUpdateError` (nothing set) for a name not declared or a value of another type.
    public func setState(_ values: [String: StateValue], for duration: Duration? = nil, session: MishapSession? = nil) throws {
        let milliseconds = duration.map { Int($0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) }
        let changes = values.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value, milliseconds: milliseconds) }
        _ = try service.setState(changes, session: session?.id).get()
    }

    /// Starts cycles, state values and quotas over, removes rules added at runtime, and clears
    /// the journal, unmatched requests and retry checks: all, or one session's.
    public func reset(session: MishapSession? = nil) {
        service.reset(session: session?.id)
    }

    /// Reads the scenarios again (a folder) and answers with them from the next request on.
    /// Throws `ScenarioError` when they have problems; the previous ones keep answering.
    public func reload() throws {
        try service.reload()
    }

    /// Replaces the scenarios with new text.
    public func reload(yaml text: String, name: String = "inline.yaml") throws {
        try service.reload(yaml: text, name: name)
    }
}
