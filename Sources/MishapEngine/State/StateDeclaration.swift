/// A named state value declared in a scenario file (`state:`): its initial value, which it has
/// in every new set and returns to when a change made `for` a while expires, and optionally a
/// value it starts with for a while instead (an outage from start-up).
public struct StateDeclaration: Sendable, Equatable {
    public let name: String
    public let initial: StateValue
    /// A value each new set starts with, for `milliseconds`, before it reverts to `initial`:
    /// the shared set from start-up (and each reset), a session's from its first request.
    public let start: Start?
    /// Where it was declared (`scenarios/token.yaml:3:3`), for messages.
    public let location: String

    public struct Start: Sendable, Equatable {
        public let value: StateValue
        public let milliseconds: Int

        public init(value: StateValue, milliseconds: Int) {
            self.value = value
            self.milliseconds = milliseconds
        }
    }

    public init(name: String, initial: StateValue, start: Start? = nil, location: String = "") {
        self.name = name
        self.initial = initial
        self.start = start
        self.location = location
    }

    public var kind: StateValue.Kind { initial.kind }

    /// Whether `other` declares the same value: same name, initial value and start (where it
    /// was declared does not matter). Values of unchanged declarations carry over a reload.
    func sameValue(as other: StateDeclaration) -> Bool {
        name == other.name && initial == other.initial && start == other.start
    }

    public static func == (lhs: StateDeclaration, rhs: StateDeclaration) -> Bool {
        lhs.sameValue(as: rhs)
    }
}
