import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import MishapHTTP
import MishapService

/// A real Mishap on 127.0.0.1 and a free port, in process, started as `mishap serve` starts it
/// (`MishapInstance`): the service answers every request (scenarios, journal, admin API under
/// `/__mishap/`) through the HTTP server. Stopped when released.
public final class TestServer: Sendable {
    /// The running Mishap: its service, its server and its watcher.
    public let instance: MishapInstance
    /// The URL clients use, `http://127.0.0.1:PORT`.
    public let baseURL: URL

    /// The server's defaults for tests: a free port.
    public static let configuration = ServerConfiguration(port: 0)

    /// Serves a scenarios folder (by default the repository's `scenarios/`); `watch` picks up
    /// edits to it.
    public convenience init(directory: String = defaultScenariosDirectory, options: ServiceOptions = ServiceOptions(),
                            configuration: ServerConfiguration = TestServer.configuration,
                            watch: MishapInstance.WatchMode = .off, logger: Logger = quietLogger) throws {
        try self.init(.directory(directory), options: options, configuration: configuration, watch: watch, logger: logger)
    }

    /// Serves scenario text, as if read from a file named `name`.
    public convenience init(yaml: String, name: String = "t.yaml", options: ServiceOptions = ServiceOptions(),
                            configuration: ServerConfiguration = TestServer.configuration, logger: Logger = quietLogger) throws {
        try self.init(.yaml(yaml, name: name), options: options, configuration: configuration, watch: .off, logger: logger)
    }

    /// Starts Mishap: the scenarios from `scenarios`, the service with `options`, the server
    /// with `configuration`, and the folder watched as `watch` says; everything logged to
    /// `logger`. Scenario problems and a server that cannot listen are thrown.
    public init(_ scenarios: ScenarioSource, options: ServiceOptions, configuration: ServerConfiguration,
                watch: MishapInstance.WatchMode, logger: Logger) throws {
        instance = try MishapInstance.start(
            MishapInstance.Configuration(scenarios: scenarios, service: options, server: configuration, watch: watch),
            logger: logger)
        baseURL = URL(string: instance.url)!
    }

    deinit { instance.stop() }

    /// The scenarios in force, the journal and the admin API.
    public var service: MishapService { instance.service }
    /// The HTTP server.
    public var server: HTTPServer { instance.server }
    /// The port listened on.
    public var port: UInt16 { instance.port }

    /// The URL of `pathAndQuery` on this server.
    public func url(_ pathAndQuery: String) -> URL {
        URL(string: baseURL.absoluteString + pathAndQuery)!
    }

    /// Sends a request with URLSession and returns what the client sees; `timeout` overrides
    /// the session's request timeout.
    public func send(_ method: String = "GET", _ pathAndQuery: String, body: Data? = nil, headers: [String: String] = [:],
                     timeout: TimeInterval? = nil) async throws -> ClientResponse {
        try await testSession.clientResponse(method, url(pathAndQuery), body: body, headers: headers, timeout: timeout)
    }

    /// Sends a JSON body.
    public func post(_ path: String, json object: [String: Any]) async throws -> ClientResponse {
        try await send("POST", path, body: JSONSerialization.data(withJSONObject: object), headers: ["Content-Type": "application/json"])
    }

    /// A new raw connection to this server.
    public func connect(timeoutSeconds: Int = 10) throws -> RawHTTPConnection {
        try RawHTTPConnection(port: port, timeoutSeconds: timeoutSeconds)
    }

    /// One request on its own raw connection; the response as read from the wire.
    public func sendRaw(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> ClientResponse {
        let connection = try connect()
        try connection.sendRequest(method, target, headers: headers, body: body)
        return try connection.readResponse(toHead: method == "HEAD")
    }
}

/// A logger that writes nothing (request lines and reload errors would flood the test output).
public let quietLogger = Logger(label: "mishap") { _ in SwiftLogNoOpLogHandler() }
