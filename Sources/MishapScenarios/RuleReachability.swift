import MishapEngine

/// Rules that can never answer a request by matching: a rule below one that answers every
/// request (no `when`, no `chance`, no cycle step that passes), or below one with the same
/// `when` that always answers when it matches. Such a rule is usually a mistake (a rule appended
/// at the end of a file lands after the catch-all), so loading warns, naming both rules; it is
/// still loaded, and `X-Mishap-Rule` can still force it.
enum RuleReachability {
    /// At most this many warnings are kept; one more says how many were left out.
    static let maximumWarnings = 100

    /// A warning for each unreachable rule of `endpoints`, located at the rule (at most
    /// `maximumWarnings`, then a count of the rest). Linear in the number of rules.
    static func warnings(_ endpoints: [Endpoint]) -> [ScenarioDiagnostic] {
        var warnings: [ScenarioDiagnostic] = []
        var unshown = 0
        var firstUnshown: ScenarioDiagnostic?
        for endpoint in endpoints {
            // The earlier rules that always answer when they match, by their `when`.
            var shadowing: [String: Rule] = [:]
            var catchAll: Rule?
            for rule in endpoint.rules {
                let when = key(of: rule.when)
                if let earlier = catchAll ?? shadowing[when] {
                    let found = warning(rule, shadowedBy: earlier, catchAll: earlier === catchAll, in: endpoint)
                    if warnings.count < maximumWarnings {
                        warnings.append(found)
                    } else {
                        unshown += 1
                        if firstUnshown == nil { firstUnshown = found }
                    }
                    continue
                }
                guard alwaysAnswersWhenMatched(rule) else { continue }
                if when == alwaysKey { catchAll = rule } else if shadowing[when] == nil { shadowing[when] = rule }
            }
        }
        if let firstUnshown {
            warnings.append(ScenarioDiagnostic(file: firstUnshown.file, line: firstUnshown.line, column: firstUnshown.column,
                message: "warning: \(unshown) more rule(s) can never answer, not shown (at most \(maximumWarnings) are); the first is here"))
        }
        return warnings
    }

    /// A `when` as one string: each alternative in brief, after its length, so that no two
    /// different lists read the same. One `String`, not the list of summaries: a table keyed by
    /// `[String]` made the Swift runtime scan every protocol conformance record of the binary
    /// (is `[String]` `Hashable`?) the first time one was made, at every start.
    static func key(of when: [Predicate]) -> String {
        var key = ""
        for predicate in when {
            let summary = predicate.summary
            key += "\(summary.utf8.count):\(summary)"
        }
        return key
    }

    /// The key of a `when` that every request passes.
    private static let alwaysKey = key(of: [.always])

    /// No `chance` and no cycle step that passes: a request the rule matches is answered by it.
    static func alwaysAnswersWhenMatched(_ rule: Rule) -> Bool {
        guard rule.chance == nil else { return false }
        switch rule.action {
        case .respond: return true
        case .cycle(let steps, _): return !steps.contains { if case .pass = $0 { true } else { false } }
        }
    }

    private static func warning(_ rule: Rule, shadowedBy earlier: Rule, catchAll: Bool, in endpoint: Endpoint) -> ScenarioDiagnostic {
        let place = earlier.location.map { "\($0.file):\($0.line):\($0.column)" } ?? "?"
        let why = catchAll ? "answers every request that gets that far" : "has the same 'when' and always answers it"
        let message = "warning: rule '\(rule.name)' of \(endpoint.name) can never answer: rule '\(earlier.name)' above it (\(place)) \(why); "
            + "move it above '\(earlier.name)' (it answers only when forced, with X-Mishap-Rule: \(rule.name))"
        let location = rule.location ?? (file: "?", line: 1, column: 1)
        return ScenarioDiagnostic(file: location.file, line: location.line, column: location.column, message: message)
    }
}
