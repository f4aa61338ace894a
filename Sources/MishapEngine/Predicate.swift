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
        for (source, condition) in conditions where !condition.holds(for: context.value(of: source)) {
            return false
        }
        return true
    }
}
