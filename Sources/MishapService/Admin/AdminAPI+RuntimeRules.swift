import MishapEngine
import MishapSupport

// The admin calls of rules added at runtime (`/__mishap/rules`, `/__mishap/force`) and of
// requests no rule answered (`/__mishap/unmatched`).
extension AdminAPI {
    func rules(_ request: Request) -> ResponsePlan {
        let session = request.queryValue("session")
        if session?.isEmpty == true { return Self.error(400, "'session' must not be empty") }
        guard request.method == "POST" else {
            if request.queryValue("times") != nil || request.queryValue("ttl") != nil {
                return Self.error(400, "'times' and 'ttl' go with POST /__mishap/rules; GET takes 'session'")
            }
            let now = service.options.engine.clock()
            let entries = service.runtime.list(session: session.map { .some($0) } ?? .none, now: now)
            return Self.json(200, .object([("rules", .array(entries.map { Self.json(for: $0, now: now) }))]))
        }
        let limits: (times: Int?, ttl: Int?)
        switch Self.limits(request) {
        case .failure(let problem): return Self.error(400, problem.reason)
        case .success(let parsed): limits = parsed
        }
        guard let text = String(validUTF8: request.body), !text.allSatisfy(\.isWhitespace) else {
            return Self.error(400, "the body must be scenario text (YAML or JSON): one file's 'endpoint:' and 'rules:', or 'endpoints:'")
        }
        return added(service.addRules(yaml: text, session: session, times: limits.times, ttlMilliseconds: limits.ttl))
    }

    func force(_ request: Request) -> ResponsePlan {
        guard let endpoint = request.queryValue("endpoint"), !endpoint.isEmpty,
              let rule = request.queryValue("rule"), !rule.isEmpty else {
            return Self.error(400, "/__mishap/force needs 'endpoint' (like POST /login) and 'rule' (a rule of it)")
        }
        let session = request.queryValue("session")
        if session?.isEmpty == true { return Self.error(400, "'session' must not be empty") }
        switch Self.limits(request) {
        case .failure(let problem): return Self.error(400, problem.reason)
        case .success(let limits):
            return added(service.force(endpoint: endpoint, rule: rule, session: session, times: limits.times, ttlMilliseconds: limits.ttl))
        }
    }

    func added(_ result: Result<RuntimeRules.Entry, MishapService.RuntimeRuleError>) -> ResponsePlan {
        switch result {
        case .success(let entry):
            return Self.json(201, Self.json(for: entry, now: service.options.engine.clock()))
        case .failure(.problems(let error)):
            return Self.json(422, .object([
                ("error", .bool(true)),
                ("reason", .string("the rules have problems; nothing was added")),
                ("problems", .array(error.diagnostics.map { JSON.string($0.description) })),
            ]))
        case .failure(.unknown(let reason)): return Self.error(400, reason)
        case .failure(.limit(let reason)): return Self.error(507, reason)
        }
    }

    /// `times` (answers, 1 or more) and `ttl` (a duration over 0 and at most a day: seconds when
    /// a bare number, `30`, or with its unit, `500ms`, `2m`), in milliseconds.
    static func limits(_ request: Request) -> Result<(times: Int?, ttl: Int?), AdminProblem> {
        var times: Int?
        if let text = request.queryValue("times") {
            guard let value = Int(text), (1...1_000_000_000).contains(value) else {
                return .failure(AdminProblem("'times' must be a whole number from 1 to 1000000000 (the answers the rules give)"))
            }
            times = value
        }
        var ttl: Int?
        if let text = request.queryValue("ttl") {
            guard case .success(let milliseconds) = DurationText.milliseconds(text, bare: .seconds), milliseconds > 0 else {
                return .failure(AdminProblem("'ttl' must be a duration over 0 and at most a day: seconds (30, 0.5) or with a unit (500ms, 30s, 2m, 1h)"))
            }
            ttl = milliseconds
        }
        return .success((times, ttl))
    }

    func deleteRule(_ id: String, _ request: Request) -> ResponsePlan {
        guard request.method == "DELETE" else {
            var plan = Self.error(405, "\(request.path) takes DELETE")
            plan.headers.append(Field("Allow", "DELETE"))
            return plan
        }
        if let problem = Self.parameterProblem(request.query, path: request.path, known: []) { return Self.error(400, problem) }
        guard service.runtime.remove(id: id) else {
            return Self.error(404, "no rule '\(id)' added at runtime (it may have been used up, expired or reset); GET /__mishap/rules lists them")
        }
        return Self.json(200, .object([("deleted", .string(id))]))
    }

    func unmatched(_ request: Request) -> ResponsePlan {
        var limit: Int?
        if let text = request.queryValue("limit") {
            guard let value = Int(text), value >= 0 else { return Self.error(400, "'limit' must be a whole number, 0 or more") }
            limit = value
        }
        let items = service.unmatched.list(session: request.queryValue("session"), limit: limit)
        return Self.json(200, .object([
            ("unmatched", .array(items.map { item in
                .object([
                    ("id", item.id == 0 ? .null : .int(Int(item.id))),
                    ("time", .string(WallClock.iso8601(milliseconds: item.time))),
                    ("method", .string(item.method)),
                    ("path", .string(item.path)),
                    ("query", .array(item.query.map { .array([.string($0.name), .string($0.value)]) })),
                    ("session", .optional(item.session)),
                    ("nearMisses", .array(item.nearMisses.map { miss in
                        .object([("endpoint", .string(miss.endpoint)), ("rule", .optional(miss.rule)), ("reason", .string(miss.reason))])
                    })),
                ] + (item.contractProblems.map { [("contractProblems", JSON.array($0.map(JSON.string)))] } ?? []))
            })),
            ("capacity", .int(UnmatchedRequests.capacity)),
        ]))
    }

    static func json(for entry: RuntimeRules.Entry, now: Int64) -> JSON {
        var members: [(String, JSON)] = [
            ("id", .string(entry.id)),
            ("session", .optional(entry.session)),
            ("endpoints", .array(entry.endpointNames.map(JSON.string))),
        ]
        switch entry.kind {
        case .rules(let endpoints):
            members.append(("rules", .array(endpoints.flatMap(\.rules).map { .string($0.name) })))
        case .force(_, let rule):
            members.append(("rules", .array([.string(rule)])))
            members.append(("forced", .bool(true)))
        }
        members.append(("times", entry.times.map(JSON.int) ?? .null))
        members.append(("remaining", entry.remaining.map(JSON.int) ?? .null))
        members.append(("expiresInMs", entry.expiresAt.map { .int(Int(max(0, $0 - now))) } ?? .null))
        members.append(("addedAt", .string(WallClock.iso8601(milliseconds: entry.addedAt))))
        return .object(members)
    }
}
