import MishapEngine
import MishapScenarios
import MishapSupport

/// The admin API under `/__mishap/`: health, the scenarios loaded, reset, reload, the request
/// journal and the Retry-After check, in JSON, errors too. It answers loopback clients only,
/// unless an admin token is set: then every call must present it, from anywhere.
struct AdminAPI: Sendable {
    /// As bytes, for the comparison every request's path gets.
    static let prefixBytes: StaticString = "/__mishap/"
    static let prefix = prefixBytes.description
    let service: MishapService

    private struct Route: Sendable {
        /// The methods the call takes (`GET` takes `HEAD` too).
        let methods: [String]
        /// The query parameters the call takes; any other is refused (400), so a typo such as
        /// `reset?sesion=s1` cannot silently do something broader than asked.
        let parameters: [String]
        let handler: @Sendable (AdminAPI, Request) -> ResponsePlan

        init(method: String, parameters: [String], handler: @escaping @Sendable (AdminAPI, Request) -> ResponsePlan) {
            self.init(methods: [method], parameters: parameters, handler: handler)
        }

        init(methods: [String], parameters: [String], handler: @escaping @Sendable (AdminAPI, Request) -> ResponsePlan) {
            self.methods = methods
            self.parameters = parameters
            self.handler = handler
        }
    }

    private static let routes: [String: Route] = [
        "health": Route(method: "GET", parameters: []) { api, _ in api.health() },
        "scenarios": Route(method: "GET", parameters: []) { api, _ in api.scenarios() },
        "routes": Route(method: "GET", parameters: []) { api, _ in api.routes() },
        "reset": Route(method: "POST", parameters: ["session"]) { api, request in api.reset(request) },
        "reload": Route(method: "POST", parameters: []) { api, _ in api.reload() },
        "clock": Route(methods: ["GET", "POST"], parameters: ["session", "advance", "reset"]) { api, request in api.clock(request) },
        "requests": Route(method: "GET", parameters: journalFilters + ["limit", "bodyBytes"]) { api, request in
            api.requests(request)
        },
        "requests/count": Route(method: "GET", parameters: journalFilters) { api, request in api.count(request) },
        "unmatched": Route(method: "GET", parameters: ["session", "limit"]) { api, request in api.unmatched(request) },
        "rules": Route(methods: ["GET", "POST"], parameters: ["session", "times", "ttl"]) { api, request in api.rules(request) },
        "force": Route(method: "POST", parameters: ["endpoint", "rule", "session", "times", "ttl"]) { api, request in
            api.force(request)
        },
        "retries": Route(method: "GET", parameters: ["session", "endpoint"]) { api, request in api.retries(request) },
        "verdict": Route(method: "GET", parameters: ["session", "endpoint", "maxAttempts", "giveUpWithin"]) { api, request in
            api.verdict(request)
        },
        "state": Route(methods: ["GET", "POST"], parameters: ["session"]) { api, request in api.state(request) },
        "network": Route(methods: ["GET", "PUT", "DELETE"], parameters: ["session", "for"]) { api, request in api.network(request) },
        "tls": Route(method: "GET", parameters: []) { api, _ in api.tls() },
        "down": Route(methods: ["GET", "POST", "DELETE"], parameters: ["for"]) { api, request in api.down(request) },
        "openapi.json": Route(method: "GET", parameters: []) { _, _ in OpenAPIDescription.respond() },
    ]

    /// Each route of the table and the methods it takes, for the check that the OpenAPI
    /// description names them all.
    static var routeMethods: [String: [String]] { routes.mapValues(\.methods) }

    /// Each route of the table and the query parameters it takes, for the same check.
    static var routeParameters: [String: [String]] { routes.mapValues(\.parameters) }

    /// The filters of the journal's calls.
    static let journalFilters = ["path", "method", "session", "rule", "endpoint", "header", "body", "after"]

    /// The header that may carry the admin token, besides `Authorization: Bearer`.
    static let tokenHeader = "X-Mishap-Admin-Token"

    func respond(to request: Request) -> ResponsePlan {
        // Before anything else: a page in the developer's browser may not drive or read it.
        if let refusal = service.options.adminPolicy.refusal(for: request, tokenSet: service.options.adminToken != nil) {
            return refusal
        }
        var name = String(request.path.dropFirst(Self.prefix.count))
        if name.hasSuffix("/") { name.removeLast() }
        // The dashboard's file, for paths under `ui/` ("" for the page itself).
        let dashboardFile = name == "ui" || name.hasPrefix("ui/") ? String(name.dropFirst(2).drop(while: { $0 == "/" })) : nil
        if let token = service.options.adminToken {
            // The dashboard's own files hold no data, and a browser cannot send a header to
            // load a page: with a token set they are served to anyone, and the page sends the
            // token (which it asks for) with each call it makes.
            if let dashboardFile { return Dashboard.respond(to: request, file: dashboardFile) }
            guard let presented = Self.presentedToken(request) else {
                return Self.unauthorized("the admin API needs its token: send 'Authorization: Bearer TOKEN' or '\(Self.tokenHeader): TOKEN'")
            }
            guard Self.constantTimeEqual(presented, token) else {
                return Self.unauthorized("wrong admin token")
            }
        } else if !request.fromLoopback {
            return Self.error(403, "the admin API answers clients on this machine only (start Mishap with --admin-token to let others call it with the token)")
        }
        if name.hasPrefix("rules/") {
            return deleteRule(String(name.dropFirst("rules/".count)), request)
        }
        if name.hasPrefix("sessions/") || name == "sessions" {
            return sessionSettings(String(name.dropFirst("sessions/".count)), request)
        }
        if let dashboardFile { return Dashboard.respond(to: request, file: dashboardFile) }
        guard let route = Self.routes[name] else {
            return Self.error(404, "no admin endpoint '\(request.path)'; there are "
                + Self.routes.keys.sorted().map { Self.prefix + $0 }.joined(separator: ", "))
        }
        let method = request.method == "HEAD" ? "GET" : request.method
        guard route.methods.contains(method) else {
            var plan = Self.error(405, "\(request.path) takes \(route.methods.joined(separator: " or "))")
            plan.headers.append(Field("Allow", route.methods.flatMap { $0 == "GET" ? ["GET", "HEAD"] : [$0] }.joined(separator: ", ")))
            return plan
        }
        if let problem = Self.parameterProblem(request.query, path: request.path, known: route.parameters) {
            return Self.error(400, problem)
        }
        return route.handler(self, request)
    }

    /// Why a call's query parameters are refused, or nil: a name the call does not take (with the
    /// nearest it does, when one is close), or a parameter given twice.
    static func parameterProblem(_ query: [Field], path: String, known: [String]) -> String? {
        var seen: Set<String> = []
        for field in query {
            guard known.contains(field.name) else {
                let takes = known.isEmpty ? "\(path) takes no query parameters"
                    : "\(path) takes " + known.map { "'\($0)'" }.joined(separator: ", ")
                return "unknown query parameter '\(field.name)'\(Suggestion.hint(for: field.name, in: known)); \(takes)"
            }
            if !seen.insert(field.name).inserted {
                return "query parameter '\(field.name)' is given more than once"
            }
        }
        return nil
    }

    /// The token a request presents, from `Authorization: Bearer` or the token header.
    static func presentedToken(_ request: Request) -> String? {
        if let authorization = request.headerValue("Authorization") {
            let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                var value = parts[1]
                while value.last == " " || value.last == "\t" { value.removeLast() }
                return String(value)
            }
        }
        return request.headerValue(tokenHeader)
    }

    /// Compares without stopping at the first difference, so the time taken does not tell a
    /// client how much of a guess was right.
    static func constantTimeEqual(_ presented: String, _ token: String) -> Bool {
        let a = Array(presented.utf8), b = Array(token.utf8)
        var difference: UInt8 = a.count == b.count ? 0 : 1
        for index in 0..<b.count {
            difference |= b[index] ^ (index < a.count ? a[index] : 0)
        }
        return difference == 0
    }

    static func unauthorized(_ reason: String) -> ResponsePlan {
        var plan = error(401, reason)
        plan.headers.append(Field("WWW-Authenticate", #"Bearer realm="mishap admin""#))
        return plan
    }

    // MARK: Endpoints

    private func health() -> ResponsePlan {
        let scenarios = service.scenarios
        return Self.json(200, .object([
            ("status", .string("ok")),
            ("endpoints", .int(scenarios.endpoints.count)),
            ("rules", .int(scenarios.endpoints.reduce(0) { $0 + $1.rules.count })),
            ("reloads", .int(service.reloads)),
            ("lastReloadFailed", .bool(service.lastReloadFailure != nil)),
        ]))
    }

    private func scenarios() -> ResponsePlan {
        let scenarios = service.scenarios
        var members: [(String, JSON)] = [
            ("files", .array(scenarios.files.map(JSON.string))),
            ("endpoints", .array(scenarios.endpoints.map { endpoint in
                .object([
                    ("method", .string(endpoint.method)),
                    ("path", .string(endpoint.path.description)),
                    ("source", .optional(endpoint.source)),
                    ("rules", .array(endpoint.rules.map { rule in
                        .object([("name", .string(rule.name)), ("source", .optional(rule.source))])
                    })),
                ])
            })),
        ]
        if let state = scenarios.state {
            members.append(("state", .array(state.declarations.map { declaration in
                var fields: [(String, JSON)] = [("name", .string(declaration.name)), ("initial", Self.json(for: declaration.initial))]
                if let start = declaration.start {
                    fields.append(("start", Self.json(for: start.value)))
                    fields.append(("startForMs", .int(start.milliseconds)))
                }
                fields.append(("declared", .string(declaration.location)))
                return .object(fields)
            })))
        }
        if !scenarios.warnings.isEmpty {
            members.append(("warnings", .array(scenarios.warnings.map { JSON.string($0.description) })))
        }
        let now = service.options.engine.clock()
        let runtimeEntries = service.runtime.list(now: now)
        if !runtimeEntries.isEmpty {
            members.append(("runtimeRules", .array(runtimeEntries.map { Self.json(for: $0, now: now) })))
        }
        if let failure = service.lastReloadFailure {
            members.append(("lastReloadErrors", .array(failure.diagnostics.map { JSON.string($0.description) })))
        }
        return Self.json(200, .object(members))
    }

    /// The listing of `mishap routes`, as text: the files' endpoints, then the runtime rules.
    private func routes() -> ResponsePlan {
        let now = service.options.engine.clock()
        let lines = RouteListing.lines(service.scenarios.endpoints) + RouteListing.lines(service.runtime.list(now: now), now: now)
        return ResponsePlan(status: 200, headers: [Field("Content-Type", "text/plain; charset=utf-8"), Field("Cache-Control", "no-store")],
                            body: Array((lines.joined(separator: "\n") + "\n").utf8))
    }

    private func reset(_ request: Request) -> ResponsePlan {
        let session = request.queryValue("session")
        if session?.isEmpty == true { return Self.error(400, "'session' must not be empty") }
        service.reset(session: session)
        return Self.json(200, .object([("reset", .string(session.map { "session \($0)" } ?? "all"))]))
    }

    private func reload() -> ResponsePlan {
        do throws(ScenarioError) {
            let summary = try service.reload()
            return Self.json(200, .object([
                ("reloaded", .bool(true)),
                ("files", .int(summary.files)), ("endpoints", .int(summary.endpoints)),
                ("rules", .int(summary.rules)), ("cyclesKept", .int(summary.cyclesKept)),
            ]))
        } catch {
            return Self.json(422, .object([
                ("error", .bool(true)),
                ("reason", .string("the scenarios have problems; the previous ones keep serving")),
                ("problems", .array(error.diagnostics.map { JSON.string($0.description) })),
            ]))
        }
    }

    /// The journal filter of a call's query, or the 400 of a malformed one.
    private static func journalFilter(_ request: Request) -> Result<JournalFilter, AdminProblem> {
        var limit: Int?
        if let text = request.queryValue("limit") {
            guard let value = Int(text), value >= 0 else { return .failure(AdminProblem("'limit' must be a whole number, 0 or more")) }
            limit = value
        }
        var filter = JournalFilter(method: request.queryValue("method")?.uppercased(), path: request.queryValue("path"),
                                   session: request.queryValue("session"), rule: request.queryValue("rule"),
                                   endpoint: request.queryValue("endpoint"), limit: limit)
        if let header = request.queryValue("header") {
            guard let colon = header.firstIndex(of: ":"), colon != header.startIndex else {
                return .failure(AdminProblem("'header' must be NAME:VALUE, like header=Authorization:Bearer%20abc"))
            }
            var value = header[header.index(after: colon)...]
            while value.first == " " { value = value.dropFirst() }
            filter.header = (String(header[..<colon]), String(value))
        }
        filter.bodyContains = request.queryValue("body")
        if let text = request.queryValue("after") {
            guard let after = UInt64(text) else { return .failure(AdminProblem("'after' must be a request id, a whole number, 0 or more")) }
            filter.after = after
        }
        return .success(filter)
    }

    private func count(_ request: Request) -> ResponsePlan {
        switch Self.journalFilter(request) {
        case .failure(let problem): return Self.error(400, problem.reason)
        case .success(let filter):
            let (entries, dropped) = service.journal.entries(matching: filter)
            return Self.json(200, .object([("count", .int(entries.count)), ("dropped", .int(dropped))]))
        }
    }

    /// The journal's entries matching the call's filters, within `JournalListing.byteBudget`
    /// (`truncated` and `next` say where the rest starts), each body cut to `bodyBytes` if given.
    private func requests(_ request: Request) -> ResponsePlan {
        let filter: JournalFilter
        switch Self.journalFilter(request) {
        case .failure(let problem): return Self.error(400, problem.reason)
        case .success(let parsed): filter = parsed
        }
        var bodyBytes: Int?
        if let text = request.queryValue("bodyBytes") {
            guard let value = Int(text), value >= 0 else { return Self.error(400, "'bodyBytes' must be a whole number, 0 or more") }
            bodyBytes = value
        }
        let (entries, dropped) = service.journal.entries(matching: filter)
        let listing = JournalListing(entries: entries, capacity: service.journal.capacity, dropped: dropped,
                                     resets: service.journal.clears, bodyBytes: bodyBytes)
        return ResponsePlan(status: 200, headers: [Field("Content-Type", "application/json; charset=utf-8"),
                                                   Field("Cache-Control", "no-store")],
                            body: listing.json())
    }

    private func retries(_ request: Request) -> ResponsePlan {
        let observations = service.retries.observations(session: request.queryValue("session"),
                                                        endpoint: request.queryValue("endpoint"))
        return Self.json(200, .object([
            ("retries", .array(observations.map(Self.json(for:)))),
            ("violations", .int(observations.filter { $0.honoured == false }.count)),
        ]))
    }

    // MARK: JSON

    static func json(for observation: RetryObservation) -> JSON {
        .object([
            ("session", .optional(observation.session)),
            ("endpoint", .string(observation.endpoint)),
            ("rule", .optional(observation.rule)),
            ("status", .int(observation.status)),
            ("retryAfter", .string(observation.retryAfter)),
            ("answeredAt", .string(WallClock.iso8601(milliseconds: observation.answeredAt))),
            ("allowedAt", .string(WallClock.iso8601(milliseconds: observation.allowedAt))),
            ("nextRequestAt", .optional(observation.nextRequestAt.map(WallClock.iso8601(milliseconds:)))),
            ("requiredMs", .int(Int(observation.requiredMilliseconds))),
            ("waitedMs", .optional(observation.waitedMilliseconds.map { Int($0) })),
            ("honoured", observation.honoured.map(JSON.bool) ?? .null),
        ])
    }

    static func json(_ status: Int, _ value: JSON) -> ResponsePlan {
        ResponsePlan(status: status, headers: [Field("Content-Type", "application/json; charset=utf-8"),
                                                Field("Cache-Control", "no-store")],
                     body: Array(value.text.utf8))
    }

    static func error(_ status: Int, _ reason: String) -> ResponsePlan {
        .error(status, reason: reason, headers: [Field("Cache-Control", "no-store")])
    }
}

/// Why an admin call's parameters are refused (a 400).
struct AdminProblem: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
