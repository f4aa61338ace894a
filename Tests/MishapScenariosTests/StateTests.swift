import Foundation
import MishapEngine
import MishapScenarios
import MishapTestSupport
import Synchronization
import Testing

/// Named state without sockets: what `set` changes, what `when: state:` sees, expiry, sessions,
/// atomicity under concurrent requests, memory bounds and reloads.
@Suite("State across requests")
struct StateTests {
    static let counter = """
    state:
      calls: 0
      token: ""
      live: false
    endpoint: GET /x
    rules:
      - name: issue
        when: { query: { issue: "yes" } }
        set: { token: "{{random.hex}}", live: { value: true, for: 60s }, calls: 0 }
        respond: { json: { token: "{{state.token}}" } }
      - name: allowed
        when: { headers: { Authorization: "Bearer {{state.token}}" }, state: { token: { empty: false }, live: true, calls: { lessThan: 3 } } }
        set: { calls: { increment: 1 } }
        respond: { text: "ok {{state.calls}}" }
      - name: expired
        when: { headers: { Authorization: "Bearer {{state.token}}" }, state: { token: { empty: false } } }
        respond: { status: 401, text: expired }
      - name: unknown
        respond: { status: 401, text: unknown }
    """

    static func engine(_ yaml: String, clock: ManualClock = ManualClock(), maxSessions: Int = 10_000, seed: UInt64? = nil) throws -> Engine {
        try ScenarioLoader.load(yaml: yaml).makeEngine(options: EngineOptions(seed: seed, maxSessions: maxSessions, clock: clock.function))
    }

    static func get(_ engine: Engine, query: [Field] = [], headers: [Field] = [], session: String? = nil) -> ResponsePlan {
        var headers = headers
        if let session { headers.append(Field("X-Mishap-Session", session)) }
        return engine.respond(to: Request(method: "GET", path: "/x", query: query, headers: headers))
    }

    static func token(_ plan: ResponsePlan) -> String {
        let text = plan.text
        return String(text.dropFirst(#"{"token":""#.count).dropLast(2))
    }

    /// A rule whose response is the same for every request is sent ready-made (`prepared`), and
    /// its plan still names the endpoint and rule and carries the state changes the rule made.
    @Test func aReadyMadeResponseCarriesItsRulesChanges() throws {
        let engine = try Self.engine("""
            state: { loggedIn: false }
            endpoint: GET /x
            rules:
              - name: login
                set: { loggedIn: true }
                respond: { status: 201, text: welcome }
            """)
        let first = Self.get(engine)
        #expect(first.prepared != nil, "a fixed response is sent ready-made")
        #expect(first.status == 201 && first.text == "welcome")
        #expect(first.bookkeeping.endpoint == "GET /x" && first.bookkeeping.rule == "login")
        #expect(first.bookkeeping.stateChanges == [StateChange(name: "loggedIn", from: .boolean(false), to: .boolean(true), milliseconds: nil)])
        #expect(Self.get(engine).bookkeeping.stateChanges == [StateChange(name: "loggedIn", from: .boolean(true), to: .boolean(true), milliseconds: nil)])
    }

    @Test func aTokenIsRememberedCountedAndExpires() throws {
        let clock = ManualClock()
        let engine = try Self.engine(Self.counter, clock: clock)
        #expect(Self.get(engine, headers: [Field("Authorization", "Bearer ")]).text == "unknown", "no token issued yet")
        let issued = Self.get(engine, query: [Field("issue", "yes")])
        let token = Self.token(issued)
        #expect(token.count == 32 && token.allSatisfy(\.isHexDigit), "\(issued.text)")
        #expect(issued.bookkeeping.stateChanges.map(\.name) == ["token", "live", "calls"])
        #expect(issued.bookkeeping.stateChanges[1] == StateChange(name: "live", from: .boolean(false), to: .boolean(true), milliseconds: 60_000))
        let bearer = [Field("Authorization", "Bearer \(token)")]
        #expect((1...4).map { _ in Self.get(engine, headers: bearer).text } == ["ok 1", "ok 2", "ok 3", "expired"])
        #expect(Self.get(engine, headers: [Field("Authorization", "Bearer other")]).text == "unknown")

        // A new token, then time: alive up to 60 s, expired from then on.
        let second = Self.token(Self.get(engine, query: [Field("issue", "yes")]))
        #expect(second != token)
        let fresh = [Field("Authorization", "Bearer \(second)")]
        clock.advance(59_999)
        #expect(Self.get(engine, headers: fresh).text == "ok 1")
        clock.advance(1)
        #expect(Self.get(engine, headers: fresh).text == "expired")
        #expect(engine.stateValues(session: nil).first { $0.declaration.name == "live" }?.value == .boolean(false))
    }

    @Test func sessionsHaveTheirOwnValuesAndResetsStartThemOver() throws {
        let engine = try Self.engine(Self.counter)
        let a = Self.token(Self.get(engine, query: [Field("issue", "yes")], session: "a"))
        let b = Self.token(Self.get(engine, query: [Field("issue", "yes")], session: "b"))
        #expect(a != b)
        #expect(Self.get(engine, headers: [Field("Authorization", "Bearer \(a)")], session: "b").text == "unknown")
        #expect(Self.get(engine, headers: [Field("Authorization", "Bearer \(a)")]).text == "unknown", "the shared set has no token")
        #expect(Self.get(engine, headers: [Field("Authorization", "Bearer \(a)")], session: "a").text == "ok 1")
        engine.reset(session: "a")
        #expect(Self.get(engine, headers: [Field("Authorization", "Bearer \(a)")], session: "a").text == "unknown")
        #expect(Self.get(engine, headers: [Field("Authorization", "Bearer \(b)")], session: "b").text == "ok 1")
        engine.reset()
        #expect(Self.get(engine, headers: [Field("Authorization", "Bearer \(b)")], session: "b").text == "unknown")
    }

    @Test func changesAreWorkedOutFromTheValuesBeforeThem() throws {
        let engine = try Self.engine("""
        state: { current: first, previous: none }
        endpoint: GET /x
        rules:
          - name: swap
            set: { previous: "{{state.current}}", current: "{{query.next}}" }
            respond: { text: "{{state.previous}} -> {{state.current}}" }
        """)
        #expect(Self.get(engine, query: [Field("next", "second")]).text == "first -> second")
        #expect(Self.get(engine, query: [Field("next", "third")]).text == "second -> third")
    }

    @Test func concurrentRequestsOfASessionLoseNoUpdate() throws {
        let engine = try Self.engine("""
        state: { taken: 0 }
        endpoint: GET /x
        rules:
          - name: take
            when: { state: { taken: { lessThan: 500 } } }
            set: { taken: { increment: 1 } }
            respond: { text: "taken" }
          - name: full
            respond: { status: 409, text: full }
        """)
        let taken = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 16) { worker in
            for _ in 0..<200 {
                let session = worker % 2 == 0 ? "even" : nil
                if Self.get(engine, session: session).status == 200 { taken.add(1, ordering: .relaxed) }
            }
        }
        // 1600 requests in each set; exactly 500 fit in each.
        #expect(taken.load(ordering: .relaxed) == 1000)
        #expect(engine.stateValues(session: "even").first?.value == .integer(500))
        #expect(engine.stateValues(session: nil).first?.value == .integer(500))
    }

    @Test func sessionsAreBounded() throws {
        let engine = try Self.engine(Self.counter, maxSessions: 10)
        for index in 0..<1000 { _ = Self.get(engine, query: [Field("issue", "yes")], session: "s\(index)") }
        #expect((engine.state?.sessionCount ?? 0) <= 10)
        // The most recent sessions are kept.
        let recent = engine.stateValues(session: "s999").first { $0.declaration.name == "live" }
        #expect(recent?.value == .boolean(true))
    }

    @Test func aStartValueHoldsForItsWhileInEachNewSet() throws {
        let clock = ManualClock()
        let engine = try Self.engine("""
        state:
          outage: { initial: false, start: true, for: 30s }
        endpoint: GET /x
        rules:
          - name: down
            when: { state: { outage: true } }
            respond: { status: 503 }
          - name: up
            respond: { status: 200 }
        """, clock: clock)
        #expect(Self.get(engine).status == 503)
        clock.advance(10_000)
        #expect(Self.get(engine, session: "late").status == 503, "a session's while starts at its first request")
        clock.advance(20_000)
        #expect(Self.get(engine).status == 200, "30 s after start-up")
        #expect(Self.get(engine, session: "late").status == 503)
        clock.advance(10_000)
        #expect(Self.get(engine, session: "late").status == 200)
        engine.reset()
        #expect(Self.get(engine).status == 503, "a reset starts the outage over")
    }

    @Test func adminChangesAreCheckedWhole() throws {
        let clock = ManualClock()
        let engine = try Self.engine(Self.counter, clock: clock)
        let set = engine.setState(json: Array(#"{"calls": 2, "live": {"value": true, "for": "5s"}, "token": "t"}"#.utf8), session: "s")
        #expect(try set.get().map(\.name) == ["calls", "live", "token"])
        #expect(Self.get(engine, headers: [Field("Authorization", "Bearer t")], session: "s").text == "ok 3")
        clock.advance(5000)
        #expect(Self.get(engine, headers: [Field("Authorization", "Bearer t")], session: "s").text == "expired")
        for (body, reason) in [
            (#"{"cals": 1}"#, "no state value 'cals' (did you mean 'calls'?)"),
            (#"{"calls": "many"}"#, "'calls' is an integer"),
            (#"{"live": {"value": true, "for": "-1s"}}"#, "'for' must not be negative"),
            (#"{"live": {"value": true, "for": "soon"}}"#, "'for' must be a duration"),
            (#"{"live": {"valu": true}}"#, "give the value"),
            (#"[1]"#, "must be a non-empty JSON object"),
            (#"{"calls": 1, "token": 5}"#, "'token' is a string"),
        ] {
            guard case .failure(let problem) = engine.setState(json: Array(body.utf8), session: "s") else {
                Issue.record("\(body) was accepted")
                continue
            }
            #expect(problem.reason.contains(reason), "\(problem.reason)")
        }
        // Nothing of a refused call was set.
        #expect(engine.stateValues(session: "s").first { $0.declaration.name == "calls" }?.value == .integer(3))
    }

    @Test func unchangedDeclarationsKeepTheirValuesOverAReload() throws {
        let before = try ScenarioLoader.load(yaml: Self.counter)
        let engine = before.makeEngine()
        let token = Self.token(Self.get(engine, query: [Field("issue", "yes")], session: "a"))
        // A rule edited, the declarations untouched: the same store.
        let edited = try ScenarioLoader.load(yaml: Self.counter.replacingOccurrences(of: "text: unknown", with: "text: who"), previous: before)
        #expect(edited.state === before.state)
        // `calls` gets another initial value and `live` goes: `token` is kept, `calls` starts over.
        let redeclared = Self.counter.replacingOccurrences(of: "  calls: 0\n", with: "  calls: 1\n")
            .replacingOccurrences(of: "  live: false\n", with: "  live2: false\n")
            .replacingOccurrences(of: "live", with: "live2").replacingOccurrences(of: "live22", with: "live2")
        let after = try ScenarioLoader.load(yaml: redeclared, previous: before)
        let values = after.makeEngine().stateValues(session: "a")
        #expect(values.first { $0.declaration.name == "token" }?.value == .string(token))
        #expect(values.first { $0.declaration.name == "calls" }?.value == .integer(1))
        #expect(values.first { $0.declaration.name == "live2" }?.value == .boolean(false))
    }

    @Test func randomPlaceholdersAndTimes() throws {
        let engine = try Self.engine("""
        endpoint: GET /x
        rules:
          - name: a
            respond: { text: "{{random.uuid}} {{random.hex.8}} {{now+60s.epoch}} {{now.iso8601}}" }
        """)
        let parts = Self.get(engine).text.split(separator: " ").map(String.init)
        try #require(parts.count == 4)
        #expect(parts[0].count == 36 && UUID(uuidString: parts[0]) != nil && parts[0].dropFirst(14).first == "4", "\(parts[0])")
        #expect(parts[1].count == 8 && parts[1].allSatisfy(\.isHexDigit))
        let epoch = Int(Date().timeIntervalSince1970)
        #expect((epoch + 58...epoch + 62).contains(Int(parts[2]) ?? 0), "\(parts[2])")
        #expect(parts[3].hasSuffix("Z") && parts[3].count == 24, "\(parts[3])")
        #expect(Self.get(engine).text.prefix(36) != parts[0])
    }
}
