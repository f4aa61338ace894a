import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a client observed: the status, the headers it reads, and the raw body.
public struct ClientResponse: Sendable {
    public let status: Int
    public let headers: [String: String]
    public var body: Data
    /// The version on the status line (`HTTP/1.1`), when read from a raw connection.
    public var httpVersion: String?

    /// A response as observed: `headers` by name as received.
    public init(status: Int, headers: [String: String], body: Data, httpVersion: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
    }

    /// The value of header `name`, the name compared without regard to case.
    public func header(_ name: String) -> String? {
        headers.first(where: { $0.key.caseInsensitiveCompare(name) == .orderedSame })?.value
    }

    /// The body decoded as a JSON object.
    public var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// One URLSession for the test process, without caches or cookies, like a test client would use.
public let testSession: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.timeoutIntervalForRequest = 10
    return URLSession(configuration: configuration)
}()

extension URLSession {
    /// Sends a request and returns what the client sees; `timeout` overrides the session's
    /// request timeout.
    public func clientResponse(_ method: String, _ url: URL, body: Data? = nil, headers: [String: String] = [:],
                               timeout: TimeInterval? = nil) async throws -> ClientResponse {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        if let timeout { request.timeoutInterval = timeout }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields { fields["\(key)"] = "\(value)" }
        return ClientResponse(status: http.statusCode, headers: fields, body: data)
    }
}
