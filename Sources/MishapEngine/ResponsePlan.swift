/// What the server must send for one request, decided by the engine.
public struct ResponsePlan: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Response headers in order; the server adds `Date` and `Content-Length` itself.
    public var headers: [Field]
    /// The complete body (not sent for `HEAD`).
    public var body: [UInt8]
    /// The endpoint that matched, as written in its scenario (`GET /login`), if any.
    public var endpoint: String?
    /// The name of the rule that answered, if any.
    public var rule: String?

    public init(status: Int, headers: [Field] = [], body: [UInt8] = [], endpoint: String? = nil, rule: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.endpoint = endpoint
        self.rule = rule
    }
}
