import MishapEngine
import MishapScenarios
import Testing

/// A large rule set keeps one copy of what its rules have in common, and a load says what it
/// loaded and how long it took.
@Suite struct RuleSetSizeTests {
    /// Endpoints `/e0` ... answering with the same JSON body and headers, one with a
    /// placeholder, one with a delay.
    static let yaml = """
        endpoints:
          - endpoint: GET /e0
            rules:
              - name: same
                respond: { json: { ok: true } }
          - endpoint: GET /e1
            rules:
              - name: same
                respond: { json: { ok: true } }
          - endpoint: GET /e2
            rules:
              - name: other
                respond: { status: 201, json: { ok: true } }
          - endpoint: GET /e3
            rules:
              - name: echo
                respond: { json: { q: "{{query.q}}" } }
          - endpoint: GET /e4
            rules:
              - name: slow
                respond: { delay: 1, json: { ok: true } }
        """

    static func plan(_ engine: Engine, _ path: String) -> ResponsePlan {
        engine.respond(to: Request(method: "GET", path: path, query: [Field("q", "x")]))
    }

    /// Equal responses without placeholders are one prepared response; the header list of
    /// every static response is one array; what differs stays apart, and each answers as written.
    @Test func equalResponsesShareOnePreparedForm() throws {
        let engine = try ScenarioLoader.load(yaml: Self.yaml).makeEngine()
        let first = Self.plan(engine, "/e0"), second = Self.plan(engine, "/e1"), other = Self.plan(engine, "/e2")
        let firstPrepared = try #require(first.prepared)
        #expect(second.prepared === firstPrepared)
        let otherPrepared = try #require(other.prepared)
        #expect(otherPrepared !== firstPrepared)
        #expect(first.bookkeeping.endpoint == "GET /e0" && second.bookkeeping.endpoint == "GET /e1")
        #expect(first.bookkeeping.rule == "same" && other.status == 201 && first.status == 200)
        #expect(String(decoding: second.body, as: UTF8.self) == #"{"ok":true}"#)
        #expect(first.headers == [Field("Content-Type", "application/json; charset=utf-8")])
        first.headers.withUnsafeBufferPointer { firstHeaders in
            other.headers.withUnsafeBufferPointer { otherHeaders in
                #expect(firstHeaders.baseAddress == otherHeaders.baseAddress)
            }
        }
        let echo = Self.plan(engine, "/e3")
        #expect(echo.prepared == nil && String(decoding: echo.body, as: UTF8.self) == #"{"q":"x"}"#)
        let slow = Self.plan(engine, "/e4")
        #expect(slow.prepared == nil && slow.delayMilliseconds == 1)
    }

    /// A rule's source is still `file:line`; the set counts its rules and says how long its
    /// load took.
    @Test func loadSaysWhatItLoadedAndHowLong() throws {
        let set = try ScenarioLoader.load(yaml: Self.yaml, name: "many.yaml")
        #expect(set.endpoints[1].rules[0].source == "many.yaml:8")
        #expect(set.ruleCount == 5)
        #expect(set.loadDuration > .zero)
        let summary = set.loadSummary()
        #expect(summary.wholeMatch(of: /loaded 5 rule\(s\) on 5 endpoint\(s\) from 1 file\(s\) in \d+\.\d\d s/) != nil, "\(summary)")
        var timed = set
        timed.loadDuration = .milliseconds(1_925)
        #expect(timed.loadSummary("reloaded") == "reloaded 5 rule(s) on 5 endpoint(s) from 1 file(s) in 1.92 s")
        timed.loadDuration = .milliseconds(40)
        #expect(timed.loadSummary() == "loaded 5 rule(s) on 5 endpoint(s) from 1 file(s) in 0.04 s")
    }
}
