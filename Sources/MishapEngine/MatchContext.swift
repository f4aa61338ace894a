import MishapSupport

/// One request being matched: the request, its session, its path parameters, and its body,
/// parsed at most once and only when a rule asks for it.
struct MatchContext {
    let request: Request
    /// The session the request names, which keeps its own cycle positions.
    let session: String?
    /// Sessions each cycle rule remembers.
    let maxSessions: Int
    var pathParameters: [Field] = []
    private var parsedBody: RequestBody?

    init(request: Request, session: String? = nil, maxSessions: Int = EngineOptions.defaultMaxSessions) {
        self.request = request
        self.session = session
        self.maxSessions = maxSessions
    }

    mutating func body() -> RequestBody {
        if let parsedBody { return parsedBody }
        let body = RequestBody(of: request)
        parsedBody = body
        return body
    }

    mutating func value(of source: ValueSource) -> String? {
        switch source {
        case .query(let name): return request.queryValue(name)
        case .header(let name): return request.headerValue(name)
        case .body(let path): return body().value(at: path)
        case .pathParameter(let name): return pathParameters.first(where: { $0.name == name })?.value
        case .method: return request.method
        case .path: return request.path
        case .httpDate(let offset): return WallClock.httpDate(secondsSinceEpoch: WallClock.nowSeconds() + offset)
        }
    }
}
