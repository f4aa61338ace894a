import MishapSupport

/// Picks the rule that answers a request and turns it into a response plan.
///
/// Built once from compiled scenarios; answering only reads it (cycle counters are atomic or
/// locked), so one engine serves every server thread at once.
public final class Engine: Sendable {
    /// Endpoints in declaration order.
    public let endpoints: [Endpoint]
    public let options: EngineOptions
    /// The declared state values of every set; nil when the scenarios declare none.
    public let state: StateStore?
    /// Rules added at runtime, tried before the files' (shared by the engines of every reload).
    public let runtime: RuntimeRules?
    private let random: RandomSource
    /// The file endpoints by name (`GET /login`), for runtime entries that force one of their rules.
    private let endpointsByName: [String: Endpoint]
    let literalPaths: [String: [Endpoint]]
    let patternPaths: PathTrie
    /// Close paths for a 404's near misses, built on the first (`NearMiss.swift`).
    let nearMissIndex = NearMissIndex()

    /// The answer when no endpoint or rule matches, as the seed server gives it.
    public static let notFoundBody: [UInt8] = ErrorBody.json(reason: "Not Found")

    public init(endpoints: [Endpoint], options: EngineOptions = EngineOptions(), state: StateStore? = nil,
                runtime: RuntimeRules? = nil) {
        self.endpoints = endpoints
        self.options = options
        self.state = state
        self.runtime = runtime
        var byName: [String: Endpoint] = [:]
        for endpoint in endpoints { byName[endpoint.name] = endpoint }
        self.endpointsByName = byName
        self.random = RandomSource(seed: options.seed)
        state?.prepareShared(now: options.clock())
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
        self.patternPaths = PathTrie(patterns)
    }

    /// Decides the response to `request`: the plan of the rule that answers it, or that none does.
    public func answer(to request: Request) -> EngineAnswer {
        var context = MatchContext(request: request, session: request.headerValue(options.sessionHeader),
                                   maxSessions: options.maxSessions, random: random, clock: options.clock)
        let forced = request.headerValue(options.ruleHeader)
        if let runtime, !runtime.isEmpty {
            for entry in runtime.candidates(session: context.session, path: request.path, now: context.now) {
                if let plan = answer(entry, &context) { return .answered(plan) }
            }
        }
        if let candidates = literalPaths[request.path] {
            // By index: `for endpoint in` copied each endpoint (a dozen reference counts).
            for index in candidates.indices where accepts(candidates[index], request.method) {
                if let plan = answer(candidates[index], &context, forced: forced) { return .answered(plan) }
            }
        }
        if !patternPaths.isEmpty {
            let found = patternPaths.find(request.path)
            for offset in 0..<found.count {
                let endpoint = patternPaths.endpoints[found[offset]]
                guard accepts(endpoint, request.method) else { continue }
                context.pathParameters = patternPaths.parameters(of: endpoint, in: request.path)
                if let plan = answer(endpoint, &context, forced: forced) { return .answered(plan) }
            }
        }
        return .unmatched
    }

    /// The response to `request`: the answering rule's plan, or `notFound` when none answers.
    public func respond(to request: Request) -> ResponsePlan {
        switch answer(to: request) {
        case .answered(let plan): plan
        case .unmatched: Self.notFound
        }
    }

    /// The answer of a runtime entry whose endpoint the request is for, unless its rules pass or
    /// its answers are all taken.
    private func answer(_ entry: RuntimeRules.Entry, _ context: inout MatchContext) -> ResponsePlan? {
        let request = context.request
        func attempt(_ endpoint: Endpoint, forcing rule: String?) -> ResponsePlan? {
            guard accepts(endpoint, request.method) else { return nil }
            if endpoint.path.isLiteral {
                guard endpoint.path.description == request.path else { return nil }
                context.pathParameters = []
            } else {
                guard let parameters = endpoint.path.match(request.path) else { return nil }
                context.pathParameters = parameters
            }
            guard entry.take() else { return nil }
            guard var plan = answer(endpoint, &context, forced: rule) else {
                entry.giveBack()
                return nil
            }
            plan.bookkeeping.runtimeRule = entry.id
            return plan
        }
        switch entry.kind {
        case .rules:
            // Compiled against this engine's state slots, never another's: a reload's new
            // engine and the one it replaces may both be answering.
            guard let endpoints = entry.endpoints(forState: state?.generation) else { return nil }
            for endpoint in endpoints {
                if let plan = attempt(endpoint, forcing: nil) { return plan }
            }
            return nil
        case .force(let name, let rule):
            guard let endpoint = endpointsByName[name] else { return nil }
            return attempt(endpoint, forcing: rule)
        }
    }

    /// The file endpoint called `name` (`GET /login`), if any.
    public func endpoint(named name: String) -> Endpoint? {
        endpointsByName[name]
    }

    private func answer(_ endpoint: Endpoint, _ context: inout MatchContext, forced: String?) -> ResponsePlan? {
        guard endpoint.usesState, let state else { return choose(endpoint, &context, forced: forced) }
        let now = context.now
        return state.withSet(session: context.session, now: now, limit: options.maxSessions) { set in
            context.state = set
            defer { context.state = nil }
            return choose(endpoint, &context, forced: forced)
        }
    }

    private func choose(_ endpoint: Endpoint, _ context: inout MatchContext, forced: String?) -> ResponsePlan? {
        guard let forced else { return endpoint.respond(&context, random: random) }
        guard let index = endpoint.rules.firstIndex(where: { $0.isNamed(forced) }) else {
            return unknownRule(forced, in: endpoint)
        }
        return endpoint.respond(&context, forcing: index, random: random)
    }

    /// The methods the endpoints serve at `path` (`ANY` standing for every method), in
    /// declaration order without repeats; empty when no endpoint has the path. For answering a
    /// browser's CORS preflight, which asks before it sends.
    public func methods(forPath path: String) -> [String] {
        var methods: [String] = []
        for endpoint in literalPaths[path] ?? [] where !methods.contains(endpoint.method) {
            methods.append(endpoint.method)
        }
        for (endpoint, _) in patternPaths.matches(path) where !methods.contains(endpoint.method) {
            methods.append(endpoint.method)
        }
        return methods
    }

    /// An endpoint answers its own method, `ANY` answers all, and `GET` also answers `HEAD`
    /// (the server leaves out the body).
    func accepts(_ endpoint: Endpoint, _ method: String) -> Bool {
        endpoint.method == method || endpoint.method == "ANY" || (method == "HEAD" && endpoint.method == "GET")
    }

    /// The answer to a request no rule answers, when nothing else takes it (`--upstream`).
    public static let notFound = ResponsePlan(
        status: 404,
        headers: [Field("Content-Type", "application/json; charset=utf-8")],
        body: notFoundBody
    )

    /// A request forced a rule the endpoint does not have: say so rather than answer normally,
    /// so a misspelt name in a test fails loudly.
    private func unknownRule(_ name: String, in endpoint: Endpoint) -> ResponsePlan {
        var reason = "\(options.ruleHeader): no rule '\(name)' in \(endpoint.name); its rules are "
        reason += endpoint.rules.map { rule in
            rule.aliases.isEmpty ? rule.name : "\(rule.name) (\(rule.aliases.joined(separator: ", ")))"
        }.joined(separator: ", ")
        var plan = ResponsePlan.error(400, reason: reason)
        plan.bookkeeping.endpoint = endpoint.name
        return plan
    }

    /// Starts every cycle, state value and quota over (rules added at runtime are the service's).
    public func reset() {
        forEachCounter { $0.reset() }
        forEachQuota { $0.counter.reset() }
        state?.reset(now: options.clock())
    }

    /// Starts one session's cycles, state values and quotas counted per session over.
    public func reset(session: String) {
        forEachCounter { $0.reset(session: session) }
        forEachQuota { quota in
            if quota.key == .session { quota.counter.reset(key: session) }
        }
        state?.reset(session: session)
    }

    private func forEachCounter(_ body: (CycleCounter) -> Void) {
        for endpoint in endpoints {
            for rule in endpoint.rules {
                if case .cycle(_, let counter) = rule.action { body(counter) }
            }
        }
    }

    private func forEachQuota(_ body: (Quota) -> Void) {
        for endpoint in endpoints {
            if let quota = endpoint.quota { body(quota) }
            for rule in endpoint.rules {
                if let quota = rule.quota { body(quota) }
            }
        }
    }
}
