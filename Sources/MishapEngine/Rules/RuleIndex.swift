/// An endpoint's rules arranged for matching. A run of neighbouring rules that each test one
/// and the same request value for equality (`userName: servererror`, `userName: [a, b]`)
/// becomes one table lookup, so a long list of magic inputs costs one lookup, not one test per
/// rule. A run of rules that each test the same value once in another way (the login
/// catalogue's `email: { prefix: ... }`) reads the value once and tests it against each rule's
/// condition in turn, or, for ASCII prefixes, only against those starting with the value's
/// first byte (`FirstByteTable`). First match still wins: the table keeps every rule of the run that
/// accepts a value, in order, and a run is tried in order.
struct RuleIndex: Sendable {
    enum Step: Sendable {
        /// Test this rule's `when`.
        case rule(Int)
        /// Look the value up: these rules accept it, in order.
        case lookup(ValueSource, [String: [Int]])
        /// Read the value once: each rule accepts it when its condition holds, in order.
        case tests(TestRun)
    }

    /// Rules that each test the same value once, from rule `first` on; the table, when there
    /// is one, says which conditions are worth testing. A class, so a step stays one reference
    /// the matching loop copies without walking its parts.
    final class TestRun: Sendable {
        let source: ValueSource
        let conditions: [Condition]
        let first: Int
        let table: FirstByteTable?

        init(source: ValueSource, conditions: [Condition], first: Int) {
            self.source = source
            self.conditions = conditions
            self.first = first
            self.table = FirstByteTable(conditions)
        }
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
        (self.steps, self.stepOfRule) = Self.groupingTests(steps, stepOfRule, rules)
    }

    /// `steps` with each run of at least `minimumLookupRun` single rules that test the same
    /// value once, with a condition that needs nothing but the value, made one `tests` step.
    private static func groupingTests(_ steps: [Step], _ stepOfRule: [Int], _ rules: [Rule]) -> ([Step], [Int]) {
        var grouped: [Step] = []
        // Where each step went; the rules of a `tests` step are placed after.
        var newIndex = [Int](repeating: 0, count: steps.count)
        var index = 0
        while index < steps.count {
            var conditions: [Condition] = []
            var source: ValueSource?
            var end = index
            if case .rule(let start) = steps[index], let (tested, _) = singleTest(rules[start]) {
                source = tested
                while end < steps.count, case .rule(let rule) = steps[end], rule == start + conditions.count,
                      let (other, condition) = singleTest(rules[rule]), other == tested {
                    conditions.append(condition)
                    end += 1
                }
            }
            if let source, conditions.count >= minimumLookupRun, case .rule(let start) = steps[index] {
                grouped.append(.tests(TestRun(source: source, conditions: conditions, first: start)))
                for step in index..<end { newIndex[step] = grouped.count - 1 }
                index = end
            } else {
                grouped.append(steps[index])
                newIndex[index] = grouped.count - 1
                index += 1
            }
        }
        return (grouped, stepOfRule.map { newIndex[$0] })
    }

    /// The value a rule tests and how, when its whole `when` is one test that depends on the
    /// value alone (not on state, placeholders or the time) of a value that reads the same
    /// every time in one request.
    private static func singleTest(_ rule: Rule) -> (ValueSource, Condition)? {
        guard rule.when.count == 1, rule.when[0].malformedBody == nil, rule.when[0].conditions.count == 1 else { return nil }
        let (source, condition) = rule.when[0].conditions[0]
        switch source {
        case .query, .header, .body, .pathParameter, .method, .path: break
        default: return nil
        }
        return condition.dependsOnValueAlone ? (source, condition) : nil
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
