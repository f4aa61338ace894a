/// A change a rule makes to a state value when it answers (`set:` in a scenario file).
public struct StateEffect: Sendable {
    /// What the value becomes.
    public enum Operation: Sendable {
        /// This value.
        case value(StateValue)
        /// The text of a template with placeholders (string values only): `{{random.hex}}`.
        case text(Template)
        /// The value plus this much (integer values only).
        case increment(Int)
    }

    public let slot: Int
    public let operation: Operation
    /// How long the new value lasts before it reverts to its initial value; nil for good.
    public let milliseconds: Int?

    public init(slot: Int, operation: Operation, milliseconds: Int? = nil) {
        self.slot = slot
        self.operation = operation
        self.milliseconds = milliseconds
    }

    var readsState: Bool {
        if case .text(let template) = operation { return template.readsState }
        return false
    }
}

extension [StateEffect] {
    /// Makes the changes in the request's set, all worked out from the values before any of
    /// them (so `previous: "{{state.token}}"` and `token: "{{random.hex}}"` swap as written),
    /// and returns them as the journal records them.
    func apply(_ context: inout MatchContext) -> [StateChange] {
        guard let set = context.state else { return [] }
        let now = context.now
        var planned: [(slot: Int, before: StateValue, after: StateValue, milliseconds: Int?)] = []
        planned.reserveCapacity(count)
        for effect in self {
            let before = set.value(effect.slot, now: now)
            let after: StateValue
            switch effect.operation {
            case .value(let value): after = value
            case .text(let template): after = .string(String(decoding: template.render(context: &context), as: UTF8.self))
            case .increment(let amount):
                guard case .integer(let number) = before else { continue }
                after = .integer(number.addingReportingOverflow(amount).overflow ? number : number + amount)
            }
            planned.append((effect.slot, before, after, effect.milliseconds))
        }
        return planned.map { change in
            set.set(change.slot, to: change.after, expiresAt: change.milliseconds.map { now + Int64($0) } ?? .max)
            return StateChange(name: set.declarations[change.slot].name, from: change.before, to: change.after,
                               milliseconds: change.milliseconds)
        }
    }
}
