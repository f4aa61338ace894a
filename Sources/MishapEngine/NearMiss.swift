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
    /// Endpoints beyond which a 404's path is not compared with every endpoint's for a typo.
    static let maximumPathsCompared = 2000

    /// The nearest endpoints and rules for a request none answered, nearest first, at most
    /// `limit`: rules of the endpoints at its path (each with its first failing test), else
    /// endpoints at its path with another method, else endpoints whose path is close to it.
    public func nearMisses(for request: Request, limit: Int = 3) -> [NearMiss] {
        var context = MatchContext(request: request, session: request.headerValue(options.sessionHeader),
                                   maxSessions: options.maxSessions, random: RandomSource(seed: 0), clock: options.clock)
        var atPath: [(Endpoint, [Field])] = []
        var runtimeEndpoints: [Endpoint] = []
        if let runtime, !runtime.isEmpty {
            let now = context.now
            for entry in runtime.candidates(session: context.session, path: request.path, now: now) {
                // Compiled against this engine's state slots (see `answer(_:_:)`).
                if let added = entry.endpoints(forState: state?.generation) { runtimeEndpoints += added }
            }
        }
        for endpoint in runtimeEndpoints + endpoints {
            if endpoint.path.isLiteral {
                if endpoint.path.description == request.path { atPath.append((endpoint, [])) }
            } else if let parameters = endpoint.path.match(request.path) {
                atPath.append((endpoint, parameters))
            }
        }
        var misses: [(score: Int, miss: NearMiss)] = []
        for (endpoint, parameters) in atPath where accepts(endpoint, request.method) {
            context.pathParameters = parameters
            let explain = { (context: inout MatchContext) -> [(Int, NearMiss)] in
                endpoint.rules.compactMap { rule in rule.nearMiss(&context).map { ($0.score, NearMiss(endpoint: endpoint.name, rule: rule.name, reason: $0.reason)) } }
            }
            if endpoint.usesState, let state {
                let now = context.now
                misses += state.withSet(session: context.session, now: now, limit: options.maxSessions) { set in
                    context.state = set
                    defer { context.state = nil }
                    return explain(&context)
                }
            } else {
                misses += explain(&context)
            }
        }
        if !misses.isEmpty {
            // Stable: among equals, the rule written first.
            return misses.enumerated().sorted { ($0.element.score, -$0.offset) > ($1.element.score, -$1.offset) }
                .prefix(limit).map(\.element.miss)
        }
        let otherMethods = atPath.map(\.0).filter { !accepts($0, request.method) }
        if !otherMethods.isEmpty {
            return otherMethods.prefix(limit).map { endpoint in
                NearMiss(endpoint: endpoint.name, rule: nil, reason: "the path is right, the method is not: \(request.method) sent, \(endpoint.method) expected")
            }
        }
        // Close paths: the same in another case or with a slash more or less, or a likely typo
        // (looked for among at most `maximumPathsCompared` endpoints, so a 404 stays cheap).
        let closest = endpoints.count <= Self.maximumPathsCompared
            ? Suggestion.closest(to: request.path, in: endpoints.map(\.path.description)) : nil
        var close: [NearMiss] = []
        for endpoint in endpoints where close.count < limit {
            let path = endpoint.path.description
            let sameIgnoringCase = path.lowercased() == request.path.lowercased()
            let slash = path + "/" == request.path || request.path + "/" == path
            if sameIgnoringCase || slash || closest == path {
                close.append(NearMiss(endpoint: endpoint.name, rule: nil,
                                      reason: "no endpoint has the path \(request.path); did you mean \(path)?"))
            }
        }
        return close
    }
}

extension Rule {
    /// How near the rule came to answering the request (the tests that held), and why it did
    /// not; nil for a rule that would have answered (its `chance` or cycle passed it over).
    func nearMiss(_ context: inout MatchContext) -> (score: Int, reason: String)? {
        var best: (score: Int, reason: String)?
        for predicate in when {
            guard let miss = predicate.nearMiss(&context) else {
                if chance != nil { return (Int.max / 2, "it matched, but its chance (\(chance!)) passed it over") }
                return (Int.max / 2, "it matched, but its cycle step was 'pass'")
            }
            if best == nil || miss.score > best!.score { best = miss }
        }
        return best
    }
}

extension Predicate {
    /// How many tests held before the first that did not, and that one in words; nil when all hold.
    func nearMiss(_ context: inout MatchContext) -> (score: Int, reason: String)? {
        if let malformedBody {
            let isMalformed: Bool
            if case .malformed = context.body() { isMalformed = true } else { isMalformed = false }
            if isMalformed != malformedBody {
                return (0, malformedBody ? "the body is well-formed, and the rule wants a malformed one" : "the body is malformed")
            }
        }
        var held = 0
        for (source, condition) in conditions {
            let value = context.value(of: source)
            guard condition.holds(for: value, in: &context) else {
                return (held, "\(source.spokenName): \(condition.explanation(for: value, in: &context))")
            }
            held += 1
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
    /// Why `value` fails the condition: `expected one of [admin, superuser], got "amdin"`.
    func explanation(for value: String?, in context: inout MatchContext) -> String {
        let got = value.map { "got \(Self.shownValue($0))" } ?? "it is missing"
        switch self {
        case .equals(let expected): return "expected \(Self.shownValue(expected)), \(got)"
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

    /// A value in quotes, cut when long.
    static func shownValue(_ value: String) -> String {
        let cut = value.count > 80 ? String(value.prefix(80)) + "…" : value
        return "\"\(cut)\""
    }
}
