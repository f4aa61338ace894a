import Foundation
import MishapEngine
import MishapScenarios
import MishapSupport
import MishapTestSupport
import Testing

/// Quotas without sockets: the sliding window, `Retry-After` to the second, the rate-limit
/// headers in both styles, keys, and what a reset starts over.
@Suite("Quotas")
struct QuotaTests {
    static func scenario(_ quota: String, rule: String = "") -> String {
        """
        endpoint: GET /x
        \(rule.isEmpty ? "quota: \(quota)" : "")
        rules:
          - name: hit
            \(rule.isEmpty ? "" : "quota: \(quota)")
            respond: { text: hit }
        """
    }

    static func get(_ engine: Engine, session: String? = nil, headers: [Field] = [], query: [Field] = []) -> ResponsePlan {
        var headers = headers
        if let session { headers.append(Field("X-Mishap-Session", session)) }
        return engine.respond(to: Request(method: "GET", path: "/x", query: query, headers: headers))
    }

    static func header(_ plan: ResponsePlan, _ name: String) -> String? {
        plan.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    @Test(arguments: ["endpoint", "rule"])
    func aSlidingWindowFreesASlotWhenItsOldestRequestLeaves(placement: String) throws {
        let clock = ManualClock()
        let yaml = Self.scenario("{ limit: 3, window: 10s }", rule: placement == "rule" ? "yes" : "")
        let engine = try ScenarioLoader.load(yaml: yaml).makeEngine(options: EngineOptions(clock: clock.function))
        var remaining: [String?] = []
        for step: Int64 in [0, 2000, 2000] {
            clock.advance(step)
            let plan = Self.get(engine)
            #expect(plan.status == 200 && plan.text == "hit")
            remaining.append(Self.header(plan, "RateLimit-Remaining"))
        }
        #expect(remaining == ["2", "1", "0"])
        clock.advance(1500)   // 5.5 s after the first request
        let refused = Self.get(engine)
        #expect(refused.status == 429)
        #expect(Self.header(refused, "Retry-After") == "5", "4.5 s until the first request leaves, rounded up")
        #expect(Self.header(refused, "RateLimit-Limit") == "3")
        #expect(Self.header(refused, "RateLimit-Remaining") == "0")
        #expect(Self.header(refused, "Content-Type") == "application/json; charset=utf-8")
        #expect(refused.text.contains("Too many requests: at most 3 per 10 s"))
        #expect(refused.bookkeeping.endpoint == "GET /x")
        #expect(refused.bookkeeping.rule == (placement == "rule" ? "hit" : "quota"), "an endpoint's quota refusals are journaled under the rule quota")
        clock.advance(4499)
        #expect(Self.get(engine).status == 429, "refused requests do not count, and 1 ms is still missing")
        clock.advance(1)
        #expect(Self.get(engine).status == 200, "the first request left the window")
        #expect(Self.get(engine).status == 429)
        #expect(Self.header(Self.get(engine), "Retry-After") == "2", "the second request leaves at 12 s")
    }

    @Test func countedPerSessionOrPerValue() throws {
        let perSession = try ScenarioLoader.load(yaml: Self.scenario("{ limit: 1, window: 1m }")).makeEngine()
        #expect(Self.get(perSession, session: "a").status == 200)
        #expect(Self.get(perSession, session: "a").status == 429)
        #expect(Self.get(perSession, session: "b").status == 200)
        #expect(Self.get(perSession).status == 200)
        #expect(Self.get(perSession).status == 429)
        perSession.reset(session: "a")
        #expect(Self.get(perSession, session: "a").status == 200)
        #expect(Self.get(perSession).status == 429, "a session's reset leaves the others")
        perSession.reset()
        #expect(Self.get(perSession).status == 200)

        let perKey = try ScenarioLoader.load(yaml: Self.scenario("{ limit: 1, window: 1m, per: headers.X-API-Key }")).makeEngine()
        #expect(Self.get(perKey, session: "a", headers: [Field("X-API-Key", "k1")]).status == 200)
        #expect(Self.get(perKey, session: "b", headers: [Field("x-api-key", "k1")]).status == 429, "same key, another session")
        #expect(Self.get(perKey, headers: [Field("X-API-Key", "k2")]).status == 200)

        let perQuery = try ScenarioLoader.load(yaml: Self.scenario("{ limit: 1, window: 1m, per: query.key }")).makeEngine()
        #expect(Self.get(perQuery, query: [Field("key", "1")]).status == 200)
        #expect(Self.get(perQuery, query: [Field("key", "2")]).status == 200)
        #expect(Self.get(perQuery, query: [Field("key", "1")]).status == 429)
    }

    @Test func draftHeadersDatesAndOwnRefusals() throws {
        let clock = ManualClock()
        let engine = try ScenarioLoader.load(yaml: Self.scenario("""
        { limit: 2, window: 30s, headers: draft, retryAfter: date, respond: { status: 503, headers: { X-Why: busy }, text: "slow down" } }
        """)).makeEngine(options: EngineOptions(clock: clock.function))
        let first = Self.get(engine)
        #expect(Self.header(first, "RateLimit-Policy") == #""default";q=2;w=30"#)
        #expect(Self.header(first, "RateLimit") == #""default";r=1;t=30"#)
        #expect(Self.header(first, "RateLimit-Limit") == nil)
        _ = Self.get(engine)
        clock.advance(10_000)
        let refused = Self.get(engine)
        #expect(refused.status == 503 && refused.text == "slow down" && Self.header(refused, "X-Why") == "busy")
        #expect(Self.header(refused, "RateLimit") == #""default";r=0;t=20"#)
        let date = try #require(Self.header(refused, "Retry-After"))
        let seconds = try #require(WallClock.secondsSinceEpoch(httpDate: date), "\(date)")
        let expected = Int64(Date().timeIntervalSince1970) + 20
        #expect((expected - 1...expected + 1).contains(seconds), "\(date)")

        let none = try ScenarioLoader.load(yaml: Self.scenario("{ limit: 1, window: 1s, headers: none }")).makeEngine()
        #expect(Self.get(none).headers.allSatisfy { !$0.name.hasPrefix("RateLimit") })
        #expect(Self.get(none).headers.map(\.name).contains("Retry-After"))
    }

    @Test func quotasOfUnchangedRulesKeepTheirCountsOverAReload() throws {
        let yaml = Self.scenario("{ limit: 1, window: 1m }", rule: "yes")
        let before = try ScenarioLoader.load(yaml: yaml)
        #expect(Self.get(before.makeEngine()).status == 200)
        let same = try ScenarioLoader.load(yaml: yaml + "\n", previous: before)
        #expect(Self.get(same.makeEngine()).status == 429)
        let changed = try ScenarioLoader.load(yaml: Self.scenario("{ limit: 2, window: 1m }", rule: "yes"), previous: before)
        #expect(Self.get(changed.makeEngine()).status == 200)
    }

    @Test(arguments: [
        ("{ limit: 0, window: 1s }", 2, "'limit' must be from 1 to 100000"),
        ("{ limit: 5 }", 2, "'quota' needs 'limit' (requests) and 'window'"),
        ("{ limit: 5, window: -1s }", 2, "'window' must not be negative"),
        ("{ limit: 5, window: 0 }", 2, "'window' must be longer than 0"),
        ("{ limit: 5, window: 1s, per: cookie }", 2, "'per' must be session, headers.NAME or query.NAME"),
        ("{ limit: 5, window: 1s, retryAfter: later }", 2, "'retryAfter' must be seconds or date"),
        ("{ limit: 5, window: 1s, headers: draf }", 2, "(did you mean 'draft'?)"),
        ("{ limit: 5, window: 1s, windw: 2 }", 2, "unknown key 'windw' in 'quota' (did you mean 'window'?)"),
    ])
    func mistakesAreLocated(quota: String, line: Int, message: String) {
        let problems = diagnostics(ofYAML: Self.scenario(quota))
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.line == line, "\(problems)")
        #expect(problems.first?.message.contains(message) == true, "\(problems)")
    }
}
