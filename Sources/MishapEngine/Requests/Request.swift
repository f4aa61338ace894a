/// One HTTP request as the engine sees it: already decoded, with the body read completely.
public struct Request: Sendable {
    /// The method in upper case, e.g. `GET`.
    public var method: String
    /// The percent-decoded path without the query string.
    public var path: String
    /// Percent-decoded query parameters in the order they were sent.
    public var query: [Field]
    /// Request headers as received (names compare case-insensitively).
    public var headers: [Field]
    /// The complete request body.
    public var body: [UInt8]
    /// Whether the client connected from this machine (a loopback address).
    public var fromLoopback: Bool
    /// How many bytes of response headers the connection has room for beside this request:
    /// `ResponseHead.maximumHeaderBytes`, or less when the request itself takes much of the
    /// connection's memory (a very long target). Set by the server; a response whose headers do
    /// not fit is planned as a 500 saying so.
    public var responseHeaderRoom = ResponseHead.maximumHeaderBytes

    public init(method: String, path: String, query: [Field] = [], headers: [Field] = [], body: [UInt8] = [], fromLoopback: Bool = false) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.fromLoopback = fromLoopback
    }

    /// The first query parameter called `name`.
    public func queryValue(_ name: String) -> String? {
        for field in query where field.name == name { return field.value }
        return nil
    }

    /// The first header called `name`, compared without regard to ASCII case.
    public func headerValue(_ name: String) -> String? {
        for field in headers where field.name.equalsIgnoringASCIICase(name) { return field.value }
        return nil
    }
}
