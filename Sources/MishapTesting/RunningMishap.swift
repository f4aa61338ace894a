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
        do {
            instance = try MishapInstance.start(
                MishapInstance.Configuration(
                    scenarios: source,
                    service: ServiceOptions(
                        engine: EngineOptions(sessionHeader: options.sessionHeader, ruleHeader: options.ruleHeader,
                                              seed: options.seed),
                        journalSize: options.journalSize, logRequests: options.logRequests, cors: options.cors),
                    server: ServerConfiguration(port: 0, threads: options.threads),
                    watch: options.watch ? .auto : .off),
                logger: logger)
        } catch {
            switch error {
            case .scenarios(let problems): throw problems
            case .server(let failure): throw failure
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
        MishapSession(id: id, headerName: options.sessionHeader)
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

    /// Starts cycles, state values and quotas over and clears the journal and retry checks:
    /// all, or one session's.
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
