import Synchronization

/// One named rule of an endpoint: when a request matches, what to answer.
public struct Rule: Sendable {
    /// What a rule does once its `when` holds.
    public enum Action: Sendable {
        /// Always the same response.
        case respond(ResponseTemplate)
        /// One step per matching request, in order, then from the start again.
        case cycle([CycleStep], CycleCounter)
    }

    /// A step of a cycle.
    public enum CycleStep: Sendable {
        case respond(ResponseTemplate)
        /// Fall through: the rules after this one answer as if this rule had not matched.
        case pass
    }

    public var name: String
    /// Alternatives: the rule matches when any of them holds.
    public var when: [Predicate]
    public var action: Action
    /// Where the rule was declared (`scenarios/login.yaml:12`), for listings and logs.
    public var source: String?

    public init(name: String, when: [Predicate] = [.always], action: Action, source: String? = nil) {
        self.name = name
        self.when = when
        self.action = action
        self.source = source
    }

    func matches(_ context: inout MatchContext) -> Bool {
        for predicate in when where predicate.holds(in: &context) { return true }
        return false
    }
}

/// Counts the requests a cycle has seen. Exact under concurrency: every request takes a
/// distinct position, with no lost or doubled counts.
public final class CycleCounter: Sendable {
    private let count = Atomic<UInt>(0)

    public init() {}

    /// Takes the next position, in `0..<length`.
    func next(length: Int) -> Int {
        let taken = count.wrappingAdd(1, ordering: .relaxed).oldValue
        return Int(taken % UInt(length))
    }

    /// Starts the cycle over.
    public func reset() {
        count.store(0, ordering: .relaxed)
    }
}
