/// An endpoint's rules arranged for matching. A run of neighbouring rules that each test one
/// and the same request value for equality (`userName: servererror`, `userName: [a, b]`)
/// becomes one table lookup, so a long list of magic inputs costs one lookup, not one test per
/// rule. First match still wins: the table keeps every rule of the run that accepts a value, in
/// order.
struct RuleIndex: Sendable {
    enum Step: Sendable {
        /// Test this rule's `when`.
        case rule(Int)
        /// Look the value up: these rules accept it, in order.
        case lookup(ValueSource, [String: [Int]])
    }

    /// The shortest run of equality rules worth a table: testing two or three rules one by one
    /// costs about what a lookup does, and a table costs a few hundred bytes, which adds up over
    /// many endpoints of a few rules each.
    static let minimumLookupRun = 4

    let steps: [Step]
    /// For each rule, the step that holds it.
    let stepOfRule: [Int]

    init(_ rules: [Rule]) {
        var steps: [Step] = []
        var stepOfRule: [Int] = []
        var index = 0
        while index < rules.count {
            guard let (source, _) = Self.equalityTest(rules[index]) else {
                steps.append(.rule(index))
                stepOfRule.append(steps.count - 1)
                index += 1
                continue
            }
            var end = index
            var table: [String: [Int]] = [:]
            while end < rules.count, let (other, values) = Self.equalityTest(rules[end]), other == source {
                for value in values { table[value, default: []].append(end) }
                end += 1
            }
            if end - index < Self.minimumLookupRun {
                for rule in index..<end {
                    steps.append(.rule(rule))
                    stepOfRule.append(steps.count - 1)
                }
            } else {
                steps.append(.lookup(source, table))
                stepOfRule += Array(repeating: steps.count - 1, count: end - index)
            }
            index = end
        }
        self.steps = steps
        self.stepOfRule = stepOfRule
    }

    /// The value a rule tests and the values it accepts, when its whole `when` is one equality test.
    private static func equalityTest(_ rule: Rule) -> (ValueSource, [String])? {
        guard rule.when.count == 1, rule.when[0].malformedBody == nil, rule.when[0].conditions.count == 1 else { return nil }
        let (source, condition) = rule.when[0].conditions[0]
        switch condition {
        case .equals(let value): return (source, [value])
        case .oneOf(let values): return (source, values.sorted())
        default: return nil
        }
    }
}
