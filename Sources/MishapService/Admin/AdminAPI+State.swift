import MishapEngine

/// The admin API's view of state: the declared values of the shared set or of a session, the
/// positions of the cycles, and setting values (`/__mishap/state`).
extension AdminAPI {
    /// `GET`: the session's state values (the shared set without `session`); `POST` with a JSON
    /// object sets some: `{"outage": true}`, or `{"outage": {"value": true, "for": "30s"}}`.
    func state(_ request: Request) -> ResponsePlan {
        let session = request.queryValue("session")
        if session?.isEmpty == true { return Self.error(400, "'session' must not be empty") }
        let engine = service.engine
        var changes: [StateChange]?
        if request.method == "POST" {
            switch engine.setState(json: request.body, session: session) {
            case .success(let made): changes = made
            case .failure(let problem): return Self.error(400, problem.reason)
            }
        }
        var members: [(String, JSON)] = [
            ("session", .optional(session)),
            ("state", .object(engine.stateValues(session: session).map { entry in
                var value: [(String, JSON)] = [("value", Self.json(for: entry.value))]
                if let remaining = entry.remaining { value.append(("expiresInMs", .int(Int(remaining)))) }
                value.append(("initial", Self.json(for: entry.declaration.initial)))
                value.append(("declared", .string(entry.declaration.location)))
                return (entry.declaration.name, .object(value))
            })),
        ]
        members.append(("cycles", .array(Self.cycles(of: engine.endpoints, session: session))))
        if let changes { members.append(("changes", .array(changes.map(Self.json(for:))))) }
        return Self.json(200, .object(members))
    }

    /// Where each cycle of the files' rules stands for the session (the shared count without
    /// one): the step its next request takes, of how many, and what that step is.
    static func cycles(of endpoints: [Endpoint], session: String?) -> [JSON] {
        endpoints.flatMap { endpoint in
            endpoint.rules.compactMap { rule -> JSON? in
                guard case .cycle(let steps, let counter) = rule.action else { return nil }
                let position = counter.position(length: steps.count, session: session)
                let next: JSON
                switch steps[position] {
                case .respond(let template): next = template.proxy == nil ? .int(template.status) : .string("proxy")
                case .pass: next = .string("pass")
                }
                return .object([("endpoint", .string(endpoint.name)), ("rule", .string(rule.name)),
                                ("position", .int(position)), ("length", .int(steps.count)), ("next", next)])
            }
        }
    }

    static func json(for value: StateValue) -> JSON {
        switch value {
        case .string(let text): return .string(text)
        case .integer(let number): return .int(number)
        case .boolean(let flag): return .bool(flag)
        }
    }

    static func json(for change: StateChange) -> JSON {
        var members: [(String, JSON)] = [("name", .string(change.name)), ("from", json(for: change.from)), ("to", json(for: change.to))]
        if let milliseconds = change.milliseconds { members.append(("forMs", .int(milliseconds))) }
        return .object(members)
    }
}
