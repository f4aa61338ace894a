/// Picks the rule that answers a request and turns it into a response plan.
///
/// Built once from compiled scenarios; answering only reads it (cycle counters are atomic), so
/// one engine serves every server thread at once.
public final class Engine: Sendable {
    /// Endpoints in declaration order.
    public let endpoints: [Endpoint]
    private let literalPaths: [String: [Endpoint]]
    private let patternPaths: [Endpoint]

    /// The answer when no endpoint or rule matches, as the seed server gives it.
    public static let notFoundBody: [UInt8] = Array(#"{"error":true,"reason":"Not Found"}"#.utf8)

    public init(endpoints: [Endpoint]) {
        self.endpoints = endpoints
        var literal: [String: [Endpoint]] = [:]
        var patterns: [Endpoint] = []
        for endpoint in endpoints {
            if endpoint.path.isLiteral {
                literal[endpoint.path.description, default: []].append(endpoint)
            } else {
                patterns.append(endpoint)
            }
        }
        self.literalPaths = literal
        self.patternPaths = patterns
    }

    /// Decides the response to `request`.
    public func respond(to request: Request) -> ResponsePlan {
        var context = MatchContext(request: request)
        if let candidates = literalPaths[request.path] {
            if let plan = answer(from: candidates, &context) { return plan }
        }
        for endpoint in patternPaths where accepts(endpoint, request.method) {
            guard let parameters = endpoint.path.match(request.path) else { continue }
            context.pathParameters = parameters
            if let plan = endpoint.respond(&context) { return plan }
        }
        return Self.notFound
    }

    private func answer(from candidates: [Endpoint], _ context: inout MatchContext) -> ResponsePlan? {
        for endpoint in candidates where accepts(endpoint, context.request.method) {
            if let plan = endpoint.respond(&context) { return plan }
        }
        return nil
    }

    /// An endpoint answers its own method, `ANY` answers all, and `GET` also answers `HEAD`
    /// (the server leaves out the body).
    private func accepts(_ endpoint: Endpoint, _ method: String) -> Bool {
        endpoint.method == method || endpoint.method == "ANY" || (method == "HEAD" && endpoint.method == "GET")
    }

    static let notFound = ResponsePlan(
        status: 404,
        headers: [Field("Content-Type", "application/json; charset=utf-8")],
        body: notFoundBody
    )

    /// Starts every cycle over.
    public func reset() {
        for endpoint in endpoints {
            for rule in endpoint.rules {
                if case .cycle(_, let counter) = rule.action { counter.reset() }
            }
        }
    }
}
