import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One test's view of a shared server: its requests carry the session header, so its cycles,
/// journal entries and Retry-After checks are its own, even with other tests running at once.
public struct MishapSession: Sendable, Hashable {
    public let id: String
    public let headerName: String
    /// The server the session was made by (`mishap.session()`), for the calls below; nil for a
    /// session made on its own.
    let server: RunningMishap?

    public init(id: String, headerName: String) {
        self.init(id: id, headerName: headerName, server: nil)
    }

    init(id: String, headerName: String, server: RunningMishap?) {
        self.id = id
        self.headerName = headerName
        self.server = server
    }

    public static func == (lhs: MishapSession, rhs: MishapSession) -> Bool {
        lhs.id == rhs.id && lhs.headerName == rhs.headerName
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(headerName)
    }

    /// The server's URL with the session in its path (`http://127.0.0.1:PORT/__session/ID`):
    /// give it as the base URL to a client that cannot add the session header, such as an app
    /// under a UI test. Nil for a session not made by a server, or when the server's session
    /// prefix is off.
    public var baseURL: URL? {
        guard let server, let prefix = server.options.sessionPrefix else { return nil }
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/")
        let encoded = id.addingPercentEncoding(withAllowedCharacters: allowed) ?? id
        return URL(string: server.baseURL.absoluteString + prefix + "/" + encoded)
    }

    /// Adds rules for this session only (see `RunningMishap.addRules`); their id.
    @discardableResult
    public func addRules(yaml text: String, times: Int? = nil, for duration: Duration? = nil) throws -> String {
        try requireServer().addRules(yaml: text, session: self, times: times, for: duration)
    }

    /// Makes this session's requests to `endpoint` answer with its rule `rule` (see
    /// `RunningMishap.force`); the id of the runtime rule.
    @discardableResult
    public func force(_ endpoint: String, rule: String, times: Int? = nil, for duration: Duration? = nil) throws -> String {
        try requireServer().force(endpoint, rule: rule, session: self, times: times, for: duration)
    }

    /// How many of this session's requests the journal holds that match every filter given.
    public func count(path: String? = nil, method: String? = nil, rule: String? = nil, endpoint: String? = nil,
                      header: (name: String, value: String)? = nil, bodyContains: String? = nil) throws -> Int {
        try requireServer().count(path: path, method: method, session: self, rule: rule, endpoint: endpoint,
                                  header: header, bodyContains: bodyContains)
    }

    /// This session's requests no rule answered, with the nearest rules.
    public func unmatched() throws -> [UnmatchedRequest] {
        try requireServer().unmatched(session: self)
    }

    func requireServer() throws -> RunningMishap {
        guard let server else { throw MishapSessionError.noServer }
        return server
    }

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

/// A session made on its own (`MishapSession(id:headerName:)`) has no server to call: make it
/// with `mishap.session()`.
public enum MishapSessionError: Error, Sendable {
    case noServer
}
