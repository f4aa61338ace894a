import MishapSupport

// State values from outside the scenarios: `GET /__mishap/state` reads a set, `POST` changes it
// (an outage started by an admin call, a token planted by a test).
extension Engine {
    /// The values of the session's set (the shared one without a session), each with the
    /// milliseconds until it reverts; empty when no state is declared.
    public func stateValues(session: String?) -> [(declaration: StateDeclaration, value: StateValue, remaining: Int64?)] {
        state?.snapshot(session: session, now: options.clock()) ?? []
    }

    /// Sets state values from a JSON object: `{"outage": true}` for good, or
    /// `{"outage": {"value": true, "for": "30s"}}` for a while (`"for"` is seconds when it is
    /// a bare number, `30` or `"30"`, or carries its unit: `"500ms"`, `"2m"`). Every value is checked before any
    /// is set: a name not declared, a value of the wrong type or a bad duration changes nothing
    /// and is the error's reason.
    public func setState(json body: [UInt8], session: String?) -> Result<[StateChange], StateUpdateError> {
        switch stateValues(json: body) {
        case .success(let values): return setState(values, session: session)
        case .failure(let problem): return .failure(problem)
        }
    }

    /// Sets state values, each for good or for some milliseconds: all, or none when a name is
    /// not declared or a value is of another type.
    public func setState(_ values: [(name: String, value: StateValue, milliseconds: Int?)],
                         session: String?) -> Result<[StateChange], StateUpdateError> {
        guard let state else {
            return .failure(StateUpdateError("the scenarios declare no state (declare it with 'state:' in a scenario file)"))
        }
        var changes: [(slot: Int, value: StateValue, milliseconds: Int?)] = []
        for (name, value, milliseconds) in values {
            guard let slot = state.slot(named: name) else {
                let names = state.declarations.map(\.name)
                return .failure(StateUpdateError("no state value '\(name)'\(Suggestion.hint(for: name, in: names)); the scenarios declare "
                    + names.joined(separator: ", ")))
            }
            let declaration = state.declarations[slot]
            guard value.kind == declaration.kind else {
                return .failure(StateUpdateError("'\(name)' is \(declaration.kind == .integer ? "an" : "a") \(declaration.kind.rawValue) "
                    + "(declared at \(declaration.location)); \(value) is not one"))
            }
            if let milliseconds, !(0...DurationText.maximumMilliseconds).contains(milliseconds) {
                return .failure(StateUpdateError("'\(name)': the duration must be from 0 to a day"))
            }
            changes.append((slot, value, milliseconds))
        }
        return .success(state.set(changes, session: session, now: options.clock(), limit: options.maxSessions))
    }

    /// The values of a JSON object, typed as their declarations say.
    private func stateValues(json body: [UInt8]) -> Result<[(name: String, value: StateValue, milliseconds: Int?)], StateUpdateError> {
        guard let root = JSONValue.parse(body) else {
            return .failure(StateUpdateError("the body must be a JSON object of state names and values, like {\"outage\": true}"))
        }
        guard case .object(let members) = root, !members.isEmpty else {
            return .failure(StateUpdateError("the body must be a non-empty JSON object of state names and values, like {\"outage\": true}"))
        }
        guard let state else {
            return .failure(StateUpdateError("the scenarios declare no state (declare it with 'state:' in a scenario file)"))
        }
        var values: [(name: String, value: StateValue, milliseconds: Int?)] = []
        for (name, given) in members {
            guard let slot = state.slot(named: name) else {
                let names = state.declarations.map(\.name)
                return .failure(StateUpdateError("no state value '\(name)'\(Suggestion.hint(for: name, in: names)); the scenarios declare "
                    + names.joined(separator: ", ")))
            }
            let declaration = state.declarations[slot]
            var valueJSON = given
            var milliseconds: Int?
            if case .object(let parts) = given {
                guard let value = parts.first(where: { $0.0 == "value" })?.1 else {
                    return .failure(StateUpdateError("'\(name)': give the value, or {\"value\": VALUE, \"for\": \"30s\"}"))
                }
                if let unknown = parts.first(where: { $0.0 != "value" && $0.0 != "for" }) {
                    return .failure(StateUpdateError("'\(name)': unknown key '\(unknown.0)'; the keys are 'value' and 'for'"))
                }
                valueJSON = value
                if let duration = parts.first(where: { $0.0 == "for" })?.1 {
                    let text: String?
                    switch duration {
                    case .string(let written): text = written
                    case .number(let written): text = written
                    default: text = nil
                    }
                    // Seconds when bare, as every duration of the command line and the admin
                    // API (`{"for": 30}` is 30 s); a scenario file's `for: 30` is milliseconds.
                    switch text.map({ DurationText.milliseconds($0, bare: .seconds) }) {
                    case .success(let value)?: milliseconds = value
                    case .failure(let problem)?: return .failure(StateUpdateError("'\(name)': 'for' \(problem.words)"))
                    case nil: return .failure(StateUpdateError("'\(name)': 'for' \(DurationText.Problem.malformed(.seconds).words)"))
                    }
                }
            }
            guard let value = Self.stateValue(valueJSON, as: declaration.kind) else {
                return .failure(StateUpdateError("'\(name)' is \(declaration.kind == .integer ? "an" : "a") \(declaration.kind.rawValue) "
                    + "(declared at \(declaration.location)); \(valueJSON.text ?? "null") is not one"))
            }
            values.append((name, value, milliseconds))
        }
        return .success(values)
    }

    /// A JSON value as a value of `kind`: a JSON value of that type, or a string that reads as
    /// one (`"3"`, `"true"`: what the command line sends).
    private static func stateValue(_ json: JSONValue, as kind: StateValue.Kind) -> StateValue? {
        switch (json, kind) {
        case (.string(let text), _): return StateValue.parse(text, as: kind)
        case (.number(let text), .integer): return Int(text).map(StateValue.integer)
        case (.bool(let flag), .boolean): return .boolean(flag)
        default: return nil
        }
    }
}

/// Why an admin call could not set state values; nothing was changed.
public struct StateUpdateError: Error, Sendable {
    public let reason: String

    init(_ reason: String) {
        self.reason = reason
    }
}
