import MishapSupport

/// Why a request was not answered by a rule it was probably meant for: the nearest endpoints
/// and rules, each with the first thing that did not fit, in words
/// (`query userName: expected one of [admin, superuser], got "amdin"`). What a user asks when a
/// stub "does not work".
public struct NearMiss: Sendable, Equatable, CustomStringConvertible {
    /// The endpoint, as written (`GET /isUserNameAvailable`).
    public let endpoint: String
    /// The rule, when the endpoint was right and a rule of it nearly matched.
    public let rule: String?
    /// What did not fit.
    public let reason: String

    public var description: String {
        rule.map { "\(endpoint) rule \($0): \(reason)" } ?? "\(endpoint): \(reason)"
    }
}

extension Engine {
    /// Rules tried against a 404's request (over every endpoint at its path, each endpoint
    /// counting one at least): a path with thousands of rules costs no more than this many.
    static let maximumRulesExplained = 1000

    /// The nearest endpoints and rules for a request none answered, nearest first, at most
    /// `limit`: rules of the endpoints at its path (each with its first failing test), else
    /// endpoints at its path with another method, else endpoints whose path is close to it.
    ///
    /// Runs on the server thread that answers the 404, so its cost is bounded whatever the
    /// scenarios hold: the endpoints at the path are found through the engine's own indexes
    /// (as routing finds them), at most `maximumRulesExplained` rules are tried and only the
    /// nearest `limit` get their reason in words, and close paths are looked up in a table
    /// (`NearMissIndex`: another case, a slash more or less) with a bounded typo search.
    public func nearMisses(for request: Request, limit: Int = 3) -> [NearMiss] {
        var context = MatchContext(request: request, session: request.headerValue(options.sessionHeader),
                                   maxSessions: options.maxSessions, random: RandomSource(seed: 0), clock: options.clock)
        let atPath = endpoints(atPathOf: request, context: &context)
        var nearest: [(score: Int, order: Int, miss: NearMiss)] = []
        var budget = Self.maximumRulesExplained
        var order = 0
        for (endpoint, parameters) in atPath where budget > 0 && accepts(endpoint, request.method) {
            context.pathParameters = parameters
            let explain = { (context: inout MatchContext) -> [(score: Int, order: Int, miss: NearMiss)] in
                endpoint.nearestRules(&context, limit: limit, budget: &budget, order: &order)
            }
            if endpoint.usesState, let state {
                let now = context.now
                nearest += state.withSet(session: context.session, now: now, limit: options.maxSessions) { set in
                    context.state = set
                    defer { context.state = nil }
                    return explain(&context)
                }
            } else {
                nearest += explain(&context)
            }
            budget -= 1
        }
        if !nearest.isEmpty {
            // Stable: among equals, the rule written first.
            return nearest.sorted { ($0.score, -$0.order) > ($1.score, -$1.order) }.prefix(limit).map(\.miss)
        }
        let otherMethods = atPath.map(\.0).filter { !accepts($0, request.method) }
        if !otherMethods.isEmpty {
            return otherMethods.prefix(limit).map { endpoint in
                NearMiss(endpoint: endpoint.name, rule: nil, reason: "the path is right, the method is not: \(request.method) sent, \(endpoint.method) expected")
            }
        }
        // Close paths: the same in another case or with a slash more or less, or a likely typo.
        return nearMissIndex.closePaths(to: request.path, in: endpoints, limit: limit).map { endpoint in
            NearMiss(endpoint: endpoint.name, rule: nil, reason: "no endpoint has the path \(request.path); did you mean \(endpoint.path.description)?")
        }
    }

    /// The endpoints whose path takes `request`'s, in the order answering tries them: the
    /// runtime rules' (which the service bounds), then the files' literal paths, then their
    /// patterns; each with its path parameters.
    private func endpoints(atPathOf request: Request, context: inout MatchContext) -> [(Endpoint, [Field])] {
        var atPath: [(Endpoint, [Field])] = []
        if let runtime, !runtime.isEmpty {
            let now = context.now
            for entry in runtime.candidates(session: context.session, path: request.path, now: now) {
                // Compiled against this engine's state slots (see `answer(_:_:)`).
                guard let added = entry.endpoints(forState: state?.generation) else { continue }
                for endpoint in added {
                    if endpoint.path.isLiteral {
                        if endpoint.path.description == request.path { atPath.append((endpoint, [])) }
                    } else if let parameters = endpoint.path.match(request.path) {
                        atPath.append((endpoint, parameters))
                    }
                }
            }
        }
        for endpoint in literalPaths[request.path] ?? [] { atPath.append((endpoint, [])) }
        if !patternPaths.isEmpty {
            let found = patternPaths.find(request.path)
            for offset in 0..<found.count {
                let endpoint = patternPaths.endpoints[found[offset]]
                atPath.append((endpoint, patternPaths.parameters(of: endpoint, in: request.path)))
            }
        }
        return atPath
    }
}

extension Endpoint {
    /// The nearest `limit` of its rules to answering, each with its reason in words, trying at
    /// most `budget` rules (and taking them off it); `order` numbers the rules tried, so that
    /// among equals the rule tried first comes first.
    func nearestRules(_ context: inout MatchContext, limit: Int, budget: inout Int,
                      order: inout Int) -> [(score: Int, order: Int, miss: NearMiss)] {
        var nearest: [(score: Int, order: Int, rule: Rule, shortfall: Rule.Shortfall)] = []
        for rule in rules {
            guard budget > 0 else { break }
            budget -= 1
            order += 1
            guard let (score, shortfall) = rule.shortfall(&context) else { continue }
            // Kept sorted, nearest first, at most `limit`: reasons are written for these only.
            let position = nearest.firstIndex { $0.score < score } ?? nearest.endIndex
            guard position < limit else { continue }
            nearest.insert((score, order, rule, shortfall), at: position)
            if nearest.count > limit { nearest.removeLast() }
        }
        return nearest.map { found in
            (found.score, found.order, NearMiss(endpoint: name, rule: found.rule.name, reason: found.rule.reason(found.shortfall, &context)))
        }
    }
}

extension Rule {
    /// What kept a rule from answering.
    enum Shortfall {
        /// It matched, but its `chance` or its cycle step passed it over.
        case passedOver
        /// The body is malformed, or well-formed, against what an alternative of `when` wants.
        case malformedBody(wanted: Bool)
        /// The condition at `condition` of the alternative at `predicate` failed.
        case condition(predicate: Int, condition: Int)
    }

    /// How near the rule came to answering the request (the tests that held), and what kept
    /// it from it; nil for none (no alternative of its `when`).
    func shortfall(_ context: inout MatchContext) -> (score: Int, shortfall: Shortfall)? {
        var best: (score: Int, shortfall: Shortfall)?
        for (index, predicate) in when.enumerated() {
            guard let miss = predicate.shortfall(&context, index: index) else { return (Int.max / 2, .passedOver) }
            if best == nil || miss.score > best!.score { best = miss }
        }
        return best
    }

    /// `shortfall` in words.
    func reason(_ shortfall: Shortfall, _ context: inout MatchContext) -> String {
        switch shortfall {
        case .passedOver:
            return chance.map { "it matched, but its chance (\($0)) passed it over" } ?? "it matched, but its cycle step was 'pass'"
        case .malformedBody(let wanted):
            return wanted ? "the body is well-formed, and the rule wants a malformed one" : "the body is malformed"
        case .condition(let predicate, let index):
            let (source, condition) = when[predicate].conditions[index]
            let value = context.value(of: source)
            return "\(source.spokenName): \(condition.explanation(for: value, in: &context))"
        }
    }
}

extension Predicate {
    /// How many tests held before the first that did not, and that one; nil when all hold.
    /// `index` is the predicate's place in its rule's `when`.
    func shortfall(_ context: inout MatchContext, index: Int) -> (score: Int, shortfall: Rule.Shortfall)? {
        if let malformedBody {
            let isMalformed: Bool
            if case .malformed = context.body() { isMalformed = true } else { isMalformed = false }
            if isMalformed != malformedBody { return (0, .malformedBody(wanted: malformedBody)) }
        }
        for (held, (source, condition)) in conditions.enumerated() {
            let value = context.value(of: source)
            guard condition.holds(for: value, in: &context) else { return (held, .condition(predicate: index, condition: held)) }
        }
        return nil
    }
}

extension ValueSource {
    /// The value as a person names it: `query userName`, `header Authorization`, `body user.email`.
    var spokenName: String {
        switch self {
        case .query(let name): return "query \(name)"
        case .header(let name): return "header \(name)"
        case .body(let path): return "body \(path.joined(separator: "."))"
        case .pathParameter(let name): return "path \(name)"
        case .state(let name, _): return "state \(name)"
        default: return description
        }
    }
}

extension Condition {
    /// The most values of a `oneOf` listed in an explanation; a longer list is counted instead.
    static let maximumOptionsShown = 20

    /// Why `value` fails the condition: `expected one of [admin, superuser], got "amdin"`.
    func explanation(for value: String?, in context: inout MatchContext) -> String {
        let got = value.map { "got \(Self.shownValue($0))" } ?? "it is missing"
        switch self {
        case .equals(let expected): return "expected \(Self.shownValue(expected)), \(got)"
        case .oneOf(let options) where options.count > Self.maximumOptionsShown:
            return "expected one of \(options.count) values, \(got)"
        case .oneOf(let options): return "expected one of [\(options.sorted().joined(separator: ", "))], \(got)"
        case .absent: return "expected it to be absent, \(got)"
        case .present: return "expected it to be present, but it is missing"
        case .equalsText(let template):
            let expected = String(decoding: template.render(context: &context), as: UTF8.self)
            return "expected \(Self.shownValue(expected)) (\(template.text)), \(got)"
        case .all(let inner):
            for part in inner where !part.holds(for: value, in: &context) { return part.explanation(for: value, in: &context) }
            return "expected \(summary), \(got)"
        default:
            return "expected \(summary), \(got)"
        }
    }

    /// A value in quotes, cut when long (found without counting the whole value).
    static func shownValue(_ value: String) -> String {
        guard let end = value.index(value.startIndex, offsetBy: 80, limitedBy: value.endIndex), end < value.endIndex else {
            return "\"\(value)\""
        }
        return "\"\(value[..<end])…\""
    }
}
