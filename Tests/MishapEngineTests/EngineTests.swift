import Dispatch
import Testing
@testable import MishapEngine

@Suite struct EngineTests {
    private func json(_ status: Int, _ text: String) -> ResponseTemplate {
        ResponseTemplate(status: status, headers: [("Content-Type", Template(literal: "application/json; charset=utf-8"))], body: Template(literal: text))
    }

    private func engine(_ rules: [Rule], method: String = "GET", path: String = "/check") -> Engine {
        Engine(endpoints: [Endpoint(method: method, path: PathPattern(path)!, rules: rules)])
    }

    private func name(_ value: String) -> Predicate {
        Predicate(conditions: [(.query("name"), .equals(value))])
    }

    @Test func firstMatchingRuleAnswers() {
        let engine = engine([
            Rule(name: "admin", when: [name("admin")], action: .respond(json(400, "{}"))),
            Rule(name: "anyone", action: .respond(json(200, "{}"))),
        ])
        let admin = engine.respond(to: Request(method: "GET", path: "/check", query: [Field("name", "admin")]))
        #expect(admin.status == 400)
        #expect(admin.bookkeeping.rule == "admin")
        #expect(admin.bookkeeping.endpoint == "GET /check")
        #expect(engine.respond(to: Request(method: "GET", path: "/check", query: [Field("name", "bob")])).bookkeeping.rule == "anyone")
    }

    @Test func whenAlternativesMatchAny() {
        let engine = engine([
            Rule(name: "either", when: [name("a"), name("b")], action: .respond(json(418, "{}"))),
            Rule(name: "other", action: .respond(json(200, "{}"))),
        ])
        for value in ["a", "b"] {
            #expect(engine.respond(to: Request(method: "GET", path: "/check", query: [Field("name", value)])).status == 418)
        }
        #expect(engine.respond(to: Request(method: "GET", path: "/check", query: [Field("name", "c")])).status == 200)
    }

    @Test func unknownPathsAndMethodsAreNotFound() {
        let engine = engine([Rule(name: "ok", action: .respond(json(200, "{}")))])
        for request in [Request(method: "GET", path: "/nope"), Request(method: "POST", path: "/check")] {
            let plan = engine.respond(to: request)
            #expect(plan.status == 404)
            #expect(plan.body == Array(#"{"error":true,"reason":"Not Found"}"#.utf8))
            #expect(plan.bookkeeping.rule == nil)
        }
    }

    /// A request no rule answers is an outcome of its own, whether no endpoint has its path or
    /// every rule of the endpoint passes; the 404 is what `respond(to:)` makes of it.
    @Test func nothingMatchedIsAnOutcomeOfItsOwn() {
        let engine = engine([Rule(name: "admin", when: [name("admin")], action: .respond(json(200, "{}")))])
        for request in [Request(method: "GET", path: "/nope"), Request(method: "GET", path: "/check", query: [Field("name", "bob")])] {
            guard case .unmatched = engine.answer(to: request) else {
                Issue.record("\(request.path) was answered")
                continue
            }
            #expect(engine.respond(to: request).body == Engine.notFound.body)
        }
        let admin = Request(method: "GET", path: "/check", query: [Field("name", "admin")])
        guard case .answered(let plan) = engine.answer(to: admin) else {
            Issue.record("the admin rule did not answer")
            return
        }
        #expect(plan.bookkeeping.rule == "admin" && plan.destination == .here)
    }

    @Test func headAnswersLikeGet() {
        let engine = engine([Rule(name: "ok", action: .respond(json(200, "{}")))])
        #expect(engine.respond(to: Request(method: "HEAD", path: "/check")).bookkeeping.rule == "ok")
    }

    @Test func anyMethodAnswersEveryMethod() {
        let engine = engine([Rule(name: "ok", action: .respond(json(200, "{}")))], method: "ANY")
        for method in ["GET", "POST", "DELETE", "PATCH"] {
            #expect(engine.respond(to: Request(method: method, path: "/check")).status == 200)
        }
    }

    @Test func cyclePassFallsThroughToLaterRules() {
        let engine = engine([
            Rule(name: "maintenance", when: [name("maintenance")],
                 action: .cycle([.respond(json(500, "{}")), .respond(json(500, "{}")), .pass], CycleCounter())),
            Rule(name: "available", action: .respond(json(200, "{}"))),
        ])
        let request = Request(method: "GET", path: "/check", query: [Field("name", "maintenance")])
        let statuses = (0..<7).map { _ in engine.respond(to: request).status }
        #expect(statuses == [500, 500, 200, 500, 500, 200, 500])
        // Requests the rule does not match do not move its cycle.
        _ = engine.respond(to: Request(method: "GET", path: "/check", query: [Field("name", "x")]))
        #expect(engine.respond(to: request).status == 500)
        #expect(engine.respond(to: request).status == 200)
        engine.reset()
        #expect(engine.respond(to: request).status == 500)
    }

    @Test func resettingOneSessionLeavesTheOthersAndTheSharedCount() {
        let engine = engine([
            Rule(name: "maintenance", action: .cycle([.respond(json(500, "{}")), .respond(json(500, "{}")), .pass], CycleCounter())),
            Rule(name: "available", action: .respond(json(200, "{}"))),
        ])
        func status(_ session: String?) -> Int {
            engine.respond(to: Request(method: "GET", path: "/check", headers: session.map { [Field("X-Mishap-Session", $0)] } ?? [])).status
        }
        #expect([status("a"), status("b"), status(nil)] == [500, 500, 500])
        engine.reset(session: "a")
        #expect(status("a") == 500)
        #expect(status("b") == 500)
        #expect(status(nil) == 500)
        #expect(status("a") == 500)
        #expect(status("b") == 200)
        #expect(status(nil) == 200)
    }

    @Test func pathParametersFeedConditionsAndTemplates() {
        let template = ResponseTemplate(status: 200, body: Template(segments: [.literal(Array("user ".utf8)), .value(.pathParameter("id"))], escaping: .none))
        let engine = engine([
            Rule(name: "gone", when: [Predicate(conditions: [(.pathParameter("id"), .equals("0"))])], action: .respond(json(410, "{}"))),
            Rule(name: "user", action: .respond(template)),
        ], path: "/users/{id}")
        #expect(engine.respond(to: Request(method: "GET", path: "/users/0")).status == 410)
        #expect(engine.respond(to: Request(method: "GET", path: "/users/42")).body == Array("user 42".utf8))
        #expect(engine.respond(to: Request(method: "GET", path: "/users/42/x")).status == 404)
    }

    @Test func malformedBodyPredicate() {
        let engine = engine([
            Rule(name: "malformed", when: [Predicate(malformedBody: true)], action: .respond(json(400, "{}"))),
            Rule(name: "ok", action: .respond(json(200, "{}"))),
        ], method: "POST")
        #expect(engine.respond(to: Request(method: "POST", path: "/check", body: Array("{nope".utf8))).status == 400)
        #expect(engine.respond(to: Request(method: "POST", path: "/check", body: Array("{}".utf8))).status == 200)
        #expect(engine.respond(to: Request(method: "POST", path: "/check")).status == 200)
    }

    @Test func cycleCounterIsExactUnderConcurrency() {
        let counter = CycleCounter()
        let positions = (0..<3).map { _ in Tally() }
        DispatchQueue.concurrentPerform(iterations: 30_000) { _ in
            positions[counter.next(length: 3, session: nil)].increment()
        }
        #expect(positions.map { $0.value } == [10_000, 10_000, 10_000])
    }
}

import Synchronization

private final class Tally: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.wrappingAdd(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Per-session cycle positions are bounded: past the limit, the sessions seen longest ago are
/// forgotten and start over, recent ones keep their place, and long session values are kept
/// whole within a byte budget.
@Suite struct SessionBoundTests {
    static func cycleEngine(maxSessions: Int) -> Engine {
        let step = { (status: Int) in Rule.CycleStep.respond(ResponseTemplate(status: status, body: Template(literal: ""))) }
        let rule = Rule(name: "m", action: .cycle([step(500), step(501), step(200)], CycleCounter()))
        return Engine(endpoints: [Endpoint(method: "GET", path: PathPattern("/m")!, rules: [rule])],
                      options: EngineOptions(maxSessions: maxSessions))
    }

    static func status(_ engine: Engine, session: String) -> Int {
        engine.respond(to: Request(method: "GET", path: "/m", headers: [Field("X-Mishap-Session", session)])).status
    }

    static func counter(_ engine: Engine) -> CycleCounter {
        guard case .cycle(_, let counter) = engine.endpoints[0].rules[0].action else { fatalError("not a cycle") }
        return counter
    }

    @Test func atMostTheLimitIsKept() {
        let engine = Self.cycleEngine(maxSessions: 100)
        for index in 0..<10_000 {
            #expect(Self.status(engine, session: "s\(index)") == 500)
            #expect(Self.counter(engine).sessionCount <= 100)
        }
        #expect(Self.counter(engine).sessionCount >= 50)
    }

    @Test func recentSessionsKeepTheirPlace() {
        let engine = Self.cycleEngine(maxSessions: 10)
        #expect(Self.status(engine, session: "kept") == 500)
        // A steady stream of new sessions; "kept" is seen after every four of them, so it is
        // always among the five most recent, within the half of the limit that is never dropped.
        var expected = [501, 200, 500]
        for round in 0..<30 {
            for other in 0..<4 { _ = Self.status(engine, session: "r\(round)-\(other)") }
            #expect(Self.status(engine, session: "kept") == expected[0], "round \(round)")
            expected.append(expected.removeFirst())
        }
    }

    @Test func forgottenSessionStartsOver() {
        let engine = Self.cycleEngine(maxSessions: 4)
        #expect(Self.status(engine, session: "old") == 500)
        #expect(Self.status(engine, session: "old") == 501)
        for index in 0..<10 { _ = Self.status(engine, session: "n\(index)") }
        #expect(Self.status(engine, session: "old") == 500)
    }

    @Test func longSessionValuesAreKeptWholeAndDistinct() {
        let engine = Self.cycleEngine(maxSessions: 1000)
        let long = String(repeating: "x", count: 8000)
        let longToo = String(repeating: "x", count: 7999) + "y"
        // What a long session was once kept as (its first 64 bytes, a 64-bit FNV-1a hash and
        // its length), sent as a session of its own: it must not share the long one's count.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in long.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let lookalike = String(long.prefix(64)) + "#" + String(hash, radix: 16) + "/" + String(long.utf8.count)
        #expect(Self.status(engine, session: long) == 500)
        #expect(Self.status(engine, session: long) == 501)
        #expect(Self.status(engine, session: lookalike) == 500)
        #expect(Self.status(engine, session: longToo) == 500)
        #expect(Self.status(engine, session: long) == 200)
        engine.reset(session: long)
        #expect(Self.status(engine, session: long) == 500)
        #expect(Self.status(engine, session: longToo) == 501)
        #expect(Self.status(engine, session: lookalike) == 501)
    }

    /// Sessions are kept whole, so long ones take more room: the generations turn sooner, and
    /// the values kept stay within the limit's bytes (128 a session on average) however long.
    @Test func longSessionValuesAreBoundedByTheirBytes() {
        let engine = Self.cycleEngine(maxSessions: 1000)
        for index in 0..<2000 {
            _ = Self.status(engine, session: String(index) + String(repeating: "x", count: 8000))
        }
        // 500 sessions of 128 bytes a generation: 64,000 bytes, 8 of these (9 at most, with
        // the one that fills it), in each of the two generations.
        #expect(Self.counter(engine).sessionCount <= 18)
        for index in 0..<2000 { _ = Self.status(engine, session: "s\(index)") }
        #expect(Self.counter(engine).sessionCount > 500, "short sessions fill the generations as before")
    }
}
