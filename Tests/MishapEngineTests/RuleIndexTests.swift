import Testing
@testable import MishapEngine

/// Runs of equality rules are matched through a lookup table; these pin that first match still
/// wins, exactly as a rule-by-rule scan would decide.
@Suite struct RuleIndexTests {
    private func response(_ status: Int) -> ResponseTemplate {
        ResponseTemplate(status: status, body: Template(literal: ""))
    }

    private func when(_ condition: Condition) -> [Predicate] {
        [Predicate(conditions: [(.query("name"), condition)])]
    }

    private func status(_ engine: Engine, _ name: String, headers: [Field] = []) -> Int {
        engine.respond(to: Request(method: "GET", path: "/x", query: [Field("name", name)], headers: headers)).status
    }

    /// Rules a, ab, cycle and cd test the same value for equality and become one lookup;
    /// `long` does not.
    private func makeEngine() -> Engine {
        Engine(endpoints: [Endpoint(method: "GET", path: PathPattern("/x")!, rules: [
            Rule(name: "a", when: when(.equals("a")), action: .respond(response(401))),
            Rule(name: "ab", when: when(.oneOf(["a", "b"])), action: .respond(response(402))),
            Rule(name: "cycle", when: when(.equals("c")), action: .cycle([.respond(response(500)), .pass], CycleCounter())),
            Rule(name: "cd", when: when(.oneOf(["c", "d"])), action: .respond(response(403))),
            Rule(name: "long", when: when(.length(min: 5, max: nil)), action: .respond(response(404))),
            Rule(name: "rest", action: .respond(response(200))),
        ])])
    }

    @Test func earlierRulesWinForSharedValues() {
        let engine = makeEngine()
        #expect(status(engine, "a") == 401)
        #expect(status(engine, "b") == 402)
        #expect(status(engine, "d") == 403)
    }

    @Test func aPassingCycleFallsThroughWithinTheRun() {
        let engine = makeEngine()
        #expect([status(engine, "c"), status(engine, "c"), status(engine, "c")] == [500, 403, 500])
    }

    @Test func valuesOutsideTheTableReachTheRulesAfterIt() {
        let engine = makeEngine()
        #expect(status(engine, "zzzzzz") == 404)
        #expect(status(engine, "z") == 200)
    }

    @Test func forcingARuleInsideTheRunStartsAfterIt() {
        let engine = makeEngine()
        // "ab" answers a request it does not match; after a forced cycle passes, the rules
        // after it are tried as usual.
        #expect(status(engine, "q", headers: [Field("X-Mishap-Rule", "ab")]) == 402)
        _ = status(engine, "c", headers: [Field("X-Mishap-Rule", "cycle")])
        #expect(status(engine, "c", headers: [Field("X-Mishap-Rule", "cycle")]) == 403)
    }

    /// A run of prefix, suffix and length rules on one value (the login catalogue's shape)
    /// becomes one `tests` step, decided exactly as rule by rule: first match wins, a passing
    /// cycle falls through within the run, forcing starts after the forced rule.
    private func makePrefixEngine() -> Engine {
        Engine(endpoints: [Endpoint(method: "GET", path: PathPattern("/x")!, rules: [
            Rule(name: "missing", when: when(.absent), action: .respond(response(400))),
            Rule(name: "server", when: when(.prefix("server@")), action: .respond(response(500))),
            Rule(name: "cycle", when: when(.prefix("flaky@")), action: .cycle([.respond(response(503)), .pass], CycleCounter())),
            Rule(name: "flaky", when: when(.prefix("fl")), action: .respond(response(502))),
            Rule(name: "dotcom", when: when(.suffix(".com")), action: .respond(response(201))),
            Rule(name: "short", when: when(.length(min: nil, max: 3)), action: .respond(response(202))),
            Rule(name: "rest", action: .respond(response(200))),
        ])])
    }

    @Test func aRunOfOtherTestsIsOneStepDecidedAsRuleByRule() {
        let engine = makePrefixEngine()
        let index = engine.endpoints[0].index
        #expect(index.steps.count == 2, "\(index.steps)")
        guard case .tests(let run)? = index.steps.first else {
            Issue.record("expected a tests step first, got \(index.steps)")
            return
        }
        #expect(run.conditions.count == 6 && run.first == 0)
        #expect(status(engine, "server@x.com") == 500)
        #expect(status(engine, "fly@x") == 502)
        #expect([status(engine, "flaky@x"), status(engine, "flaky@x"), status(engine, "flaky@x")] == [503, 502, 503])
        #expect(status(engine, "a@b.com") == 201)
        #expect(status(engine, "ab") == 202)
        #expect(status(engine, "abcdef") == 200)
        #expect(engine.respond(to: Request(method: "GET", path: "/x")).status == 400)
        #expect(status(engine, "abcdef", headers: [Field("X-Mishap-Rule", "flaky")]) == 502)
        #expect(status(engine, "server@x.com", headers: [Field("X-Mishap-Rule", "flaky")]) == 502)
        #expect(status(engine, "zz", headers: [Field("X-Mishap-Rule", "dotcom")]) == 201)
        #expect(status(engine, "server@x", headers: [Field("X-Mishap-Rule", "missing")]) == 400)
    }

    /// Rules on different values, or whose test needs more than the value (a placeholder), or
    /// runs shorter than four, stay rule by rule.
    @Test func onlyRunsOnOneValueOfValueOnlyTestsAreGrouped() {
        let mixed = Endpoint(method: "GET", path: PathPattern("/x")!, rules: [
            Rule(name: "a", when: when(.prefix("a")), action: .respond(response(401))),
            Rule(name: "b", when: when(.prefix("b")), action: .respond(response(402))),
            Rule(name: "c", when: [Predicate(conditions: [(.query("other"), .prefix("c"))])], action: .respond(response(403))),
            Rule(name: "d", when: when(.prefix("d")), action: .respond(response(404))),
            Rule(name: "e", when: when(.equalsText(Template(literal: "e"))), action: .respond(response(405))),
        ])
        #expect(mixed.index.steps.allSatisfy { if case .rule = $0 { true } else { false } })
    }
}

