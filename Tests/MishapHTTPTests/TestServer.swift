import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapEngine
import MishapScenarios
import MishapHTTP

/// The repository's `scenarios/` folder.
let defaultScenariosDirectory: String = {
    URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scenarios").path
}()

/// A real Mishap server on 127.0.0.1 and a free port, serving a scenarios folder or YAML text.
final class TestServer: Sendable {
    let server: HTTPServer
    let engine: Engine
    let baseURL: URL

    convenience init(scenarios directory: String = defaultScenariosDirectory, configuration: ServerConfiguration = ServerConfiguration(port: 0)) throws {
        try self.init(engine: ScenarioLoader.load(directory: directory).makeEngine(), configuration: configuration)
    }

    convenience init(yaml: String, configuration: ServerConfiguration = ServerConfiguration(port: 0)) throws {
        try self.init(engine: ScenarioLoader.load(yaml: yaml).makeEngine(), configuration: configuration)
    }

    init(engine: Engine, configuration: ServerConfiguration) throws {
        self.engine = engine
        server = HTTPServer(configuration: configuration, responder: engine)
        try server.start()
        baseURL = URL(string: server.url!)!
    }

    deinit { server.stop() }

    func url(_ pathAndQuery: String) -> URL {
        URL(string: baseURL.absoluteString + pathAndQuery)!
    }
}

/// What a client observed: the status, the headers it reads, and the raw body.
struct ClientResponse {
    let status: Int
    let headers: [String: String]
    var body: Data
    /// The version on the status line (`HTTP/1.1`), when read from a raw connection.
    var httpVersion: String? = nil

    func header(_ name: String) -> String? {
        headers.first(where: { $0.key.caseInsensitiveCompare(name) == .orderedSame })?.value
    }

    /// The body decoded as a JSON object.
    var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// One URLSession per test process, without caches or cookies, like a test client would use.
let testSession: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.timeoutIntervalForRequest = 10
    return URLSession(configuration: configuration)
}()

extension TestServer {
    /// Sends a request with URLSession and returns what the client sees; `timeout` overrides
    /// the session's request timeout.
    func send(_ method: String = "GET", _ pathAndQuery: String, body: Data? = nil, headers: [String: String] = [:],
              timeout: TimeInterval? = nil) async throws -> ClientResponse {
        var request = URLRequest(url: url(pathAndQuery))
        request.httpMethod = method
        request.httpBody = body
        if let timeout { request.timeoutInterval = timeout }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await testSession.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields { fields["\(key)"] = "\(value)" }
        return ClientResponse(status: http.statusCode, headers: fields, body: data)
    }

    /// Sends a JSON body.
    func post(_ path: String, json object: [String: Any]) async throws -> ClientResponse {
        try await send("POST", path, body: JSONSerialization.data(withJSONObject: object), headers: ["Content-Type": "application/json"])
    }
}

extension String {
    /// Percent-encoded for a query value: every byte but RFC 3986's unreserved characters.
    var queryEncoded: String {
        addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))!
    }
}

let jsonContentType = "application/json; charset=utf-8"
