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
}
