/// The `when` of a rule: the tests a request must pass, all of them.
public struct Predicate: Sendable {
    /// Tests on request values (query parameters, headers, body fields, path parameters).
    public var conditions: [(ValueSource, Condition)]
    /// When set, whether the body must be malformed (true) or well-formed or empty (false).
    public var malformedBody: Bool?

    public init(conditions: [(ValueSource, Condition)] = [], malformedBody: Bool? = nil) {
        self.conditions = conditions
        self.malformedBody = malformedBody
    }

    /// A predicate every request passes.
    public static let always = Predicate()

    func holds(in context: inout MatchContext) -> Bool {
        if let malformedBody {
            let isMalformed: Bool
            if case .malformed = context.body() { isMalformed = true } else { isMalformed = false }
            guard isMalformed == malformedBody else { return false }
        }
        for (source, condition) in conditions {
            let value = context.value(of: source)
            guard condition.holds(for: value, in: &context) else { return false }
        }
        return true
    }

    /// Whether testing the predicate reads state values.
    var readsState: Bool {
        conditions.contains { $0.0.isState || $0.1.readsState }
    }
}
