import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import MishapEngine
@_exported import struct MishapScenarios.ScenarioError
@_exported import struct MishapScenarios.ScenarioDiagnostic
import MishapScenarios
import MishapHTTP
import MishapService

/// Mishap inside a test: a real server on 127.0.0.1 and a free port, in this process.
///
/// ```swift
/// try await Mishap.withServer(scenarios: .directory("scenarios")) { mishap in
///     let session = mishap.session()            // this test's own cycles and journal
///     let client = MyClient(baseURL: mishap.baseURL, configuration: session.configuration)
///     ...
///     #expect(try mishap.retries(session: session).allSatisfy { $0.honoured != false })
/// }
/// ```
public enum Mishap {
    /// Where the scenarios come from.
    public enum Scenarios: Sendable {
        /// A folder of scenario files (edits are picked up when `watch` is on, or by `reload()`).
        case directory(String)
        /// Scenario text (`name` stands for the file in error messages).
        case yaml(String, name: String = "inline.yaml")
    }

    /// Starts a server, runs `body` with it, and stops it, also when `body` throws. Stopping
    /// never waits for delayed or hanging requests.
    ///
    /// A `body` whose only `try` is inside `#expect(...)` is not inferred as throwing (a Swift
    /// limitation with macros in closures): put the `try` in a `let`, or write
    /// `{ mishap async throws in ... }`.
    @discardableResult
    public static func withServer<T>(
        scenarios: Scenarios,
        options: MishapServerOptions = MishapServerOptions(),
        _ body: (RunningMishap) async throws -> T
    ) async throws -> T {
        let mishap = try start(scenarios: scenarios, options: options)
        do {
            let result = try await body(mishap)
            mishap.stop()
            return result
        } catch {
            mishap.stop()
            throw error
        }
    }

    /// Starts a server and returns once it accepts connections; call `stop()` when done.
    /// Throws `ScenarioError` (with `path:line:column` messages) when the scenarios have problems.
    public static func start(scenarios: Scenarios, options: MishapServerOptions = MishapServerOptions()) throws -> RunningMishap {
        try RunningMishap(scenarios: scenarios, options: options)
    }
}

/// How a test server behaves; the defaults suit tests.
public struct MishapServerOptions: Sendable {
    /// Seeds `chance` and delay ranges so runs repeat.
    public var seed: UInt64?
    public var sessionHeader: String
    public var ruleHeader: String
    public var journalSize: Int
    /// Picks up edits to a scenarios folder while the server runs.
    public var watch: Bool
    /// Logs one line per request (to standard error).
    public var logRequests: Bool
    public var threads: Int

    public init(seed: UInt64? = nil, sessionHeader: String = "X-Mishap-Session", ruleHeader: String = "X-Mishap-Rule",
                journalSize: Int = 10_000, watch: Bool = false, logRequests: Bool = false, threads: Int = 2) {
        self.seed = seed
        self.sessionHeader = sessionHeader
        self.ruleHeader = ruleHeader
        self.journalSize = journalSize
        self.watch = watch
        self.logRequests = logRequests
        self.threads = threads
    }
}

/// One test's view of a shared server: its requests carry the session header, so its cycles,
/// journal entries and Retry-After checks are its own, even with other tests running at once.
public struct MishapSession: Sendable, Hashable {
    public let id: String
    public let headerName: String

    /// The header to add to every request of this test.
    public var headers: [String: String] { [headerName: id] }

    /// A fresh ephemeral configuration that adds the session header to every request.
    public var configuration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = headers
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = 30
        return configuration
    }

    /// Adds the session header to a request.
    public func apply(to request: inout URLRequest) {
        request.setValue(id, forHTTPHeaderField: headerName)
    }
}

/// A running test server.
public final class RunningMishap: @unchecked Sendable {
    /// `http://127.0.0.1:PORT`.
    public let baseURL: URL
    public let port: UInt16
    public let options: MishapServerOptions
    let service: MishapService
    private let server: HTTPServer
    private let watcher: ScenarioWatcher?

    init(scenarios: Mishap.Scenarios, options: MishapServerOptions) throws {
        self.options = options
        let source: ScenarioSource
        switch scenarios {
        case .directory(let path): source = .directory(path)
        case .yaml(let text, let name): source = .yaml(text, name: name)
        }
        var logger = Logger(label: "mishap.test")
        logger.logLevel = options.logRequests ? .info : .warning
        service = try MishapService(
            source: source,
            options: ServiceOptions(
                engine: EngineOptions(sessionHeader: options.sessionHeader, ruleHeader: options.ruleHeader, seed: options.seed),
                journalSize: options.journalSize, logRequests: options.logRequests),
            logger: logger)
        server = HTTPServer(configuration: ServerConfiguration(port: 0, threads: options.threads),
                            responder: service, observer: options.logRequests ? service : nil, logger: logger)
        try server.start()
        port = server.port ?? 0
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
        if options.watch, case .directory(let path) = scenarios {
            let service = self.service
            let watcher = ScenarioWatcher(directory: path, logger: logger) { _ = try? service.reload() }
            try? watcher.start()
            self.watcher = watcher
        } else {
            watcher = nil
        }
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
        watcher?.stop()
        server.stop()
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
    /// waited long enough.
    public func retries(session: MishapSession? = nil, endpoint: String? = nil) -> [RetryCheck] {
        service.retries.observations(session: session?.id, endpoint: endpoint).map(RetryCheck.init)
    }

    /// Starts cycles over and clears the journal and retry checks: all, or one session's.
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

/// A request as the server received it.
public struct RecordedRequest: Sendable {
    public let id: UInt64
    /// When it arrived.
    public let date: Date
    public let method: String
    public let path: String
    /// Query parameters in order, decoded.
    public let query: [(name: String, value: String)]
    public let headers: [(name: String, value: String)]
    public let body: Data
    public let session: String?
    /// `GET /login`; nil when no endpoint matched.
    public let endpoint: String?
    public let rule: String?
    /// The status sent; nil for a fault or a hang.
    public let status: Int?
    /// The fault carried out instead of an answer (`reset`, `close`, ...).
    public let fault: String?

    init(_ entry: JournalEntry) {
        id = entry.id
        date = Date(timeIntervalSince1970: Double(entry.time) / 1000)
        method = entry.method
        path = entry.path
        query = entry.query.map { ($0.name, $0.value) }
        headers = entry.headers.map { ($0.name, $0.value) }
        body = Data(entry.body)
        session = entry.session
        endpoint = entry.endpoint
        rule = entry.rule
        status = entry.status
        fault = entry.fault?.rawValue
    }

    /// The first query parameter with this name.
    public func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }
    /// The first header with this name, compared without regard to case.
    public func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
}

/// How the client followed one `Retry-After`.
public struct RetryCheck: Sendable {
    public let session: String?
    public let endpoint: String
    public let rule: String?
    public let status: Int
    /// The header as sent.
    public let retryAfter: String
    /// When the answer was sent, and when the client was allowed back.
    public let answeredAt: Date
    public let allowedAt: Date
    /// When the client came back; nil while it has not.
    public let nextRequestAt: Date?
    /// Seconds between the answer and the next request, to the millisecond.
    public let waited: TimeInterval?
    /// Seconds the header asked for, to the millisecond (exactly 1 for `Retry-After: 1`).
    public let required: TimeInterval
    /// True when the client waited long enough, false when it came back too early, nil while
    /// it has not come back.
    public let honoured: Bool?

    init(_ observation: RetryObservation) {
        session = observation.session
        endpoint = observation.endpoint
        rule = observation.rule
        status = observation.status
        retryAfter = observation.retryAfter
        answeredAt = Date(timeIntervalSince1970: Double(observation.answeredAt) / 1000)
        allowedAt = Date(timeIntervalSince1970: Double(observation.allowedAt) / 1000)
        nextRequestAt = observation.nextRequestAt.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        // From the milliseconds themselves: a difference of two Dates this far from 1970 is
        // off by a few hundred nanoseconds, enough to make `required == 1` false.
        waited = observation.waitedMilliseconds.map { Double($0) / 1000 }
        required = Double(observation.requiredMilliseconds) / 1000
        honoured = observation.honoured
    }
}
