import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTesting
import MishapTestSupport
import Testing

/// Time a test can move, per session, over real sockets with URLSession: a session's clock
/// moved forward expires its token, passes its quota window, ends its outage and its runtime
/// rules, while another session (and requests without one) keep the server's time; a session
/// that asked for short waits is sent `Retry-After: 1` for 17, and a client honouring it gets
/// through the maintenance cycle in about two seconds. No test sleeps past a second.
@Suite(.onBlockingThreads) struct SessionTimeTests {
    /// One request with URLSession, in `session` (none: without the session header).
    static func send(_ mishap: RunningMishap, _ method: String, _ pathAndQuery: String, session: MishapSession?,
                     headers: [String: String] = [:], form: String? = nil) async throws -> ClientResponse {
        var all = headers
        if let session { all.merge(session.headers) { $1 } }
        if form != nil { all["Content-Type"] = "application/x-www-form-urlencoded" }
        return try await testSession.clientResponse(method, mishap.url(pathAndQuery), body: form.map { Data($0.utf8) }, headers: all)
    }

    /// Signs in with the token flow (`POST /token`); the access token.
    static func signIn(_ mishap: RunningMishap, _ session: MishapSession) async throws -> String {
        let answer = try await send(mishap, "POST", "/token", session: session,
                                    form: "grant_type=password&username=john%40doe.com&password=onlyjohnknowsme")
        #expect(answer.status == 200, "\(answer.text)")
        return try #require(answer.json?["access_token"] as? String)
    }

    static func me(_ mishap: RunningMishap, _ session: MishapSession, token: String) async throws -> ClientResponse {
        try await send(mishap, "GET", "/me", session: session, headers: ["Authorization": "Bearer " + token])
    }

    @Test func aMovedClockExpiresTheSessionsTokenAndNoOtherSessions() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let mine = mishap.session(), other = mishap.session()
            let myToken = try await Self.signIn(mishap, mine)
            let otherToken = try await Self.signIn(mishap, other)
            let started = ContinuousClock.now
            #expect(try await Self.me(mishap, mine, token: myToken).status == 200)

            try mine.advanceClock(by: .seconds(45))
            #expect(try await Self.me(mishap, mine, token: myToken).status == 200, "45 s of its 60: still live")
            try mine.advanceClock(by: .seconds(16))
            #expect(try mine.clockOffset() == .seconds(61))
            let expired = try await Self.me(mishap, mine, token: myToken)
            #expect(expired.status == 401)
            let challenge = try #require(expired.header("WWW-Authenticate"))
            #expect(challenge.contains(#"error="invalid_token""#) && challenge.contains("expired"), "\(challenge)")
            #expect(mishap.requests(session: mine).last?.rule == "expired")
            #expect(mishap.state(session: mine)["accessTokenLive"] == false)

            // The other session's token lives on: its clock did not move.
            #expect(try await Self.me(mishap, other, token: otherToken).status == 200)
            #expect(mishap.state(session: other)["accessTokenLive"] == true)
            #expect(mishap.clockOffset(session: other) == .zero)

            // A new token in the moved session lasts its own 60 s from now.
            let fresh = try await Self.signIn(mishap, mine)
            #expect(try await Self.me(mishap, mine, token: fresh).status == 200)
            try mine.advanceClock(by: .seconds(60))
            #expect(try await Self.me(mishap, mine, token: fresh).status == 401)
            #expect(ContinuousClock.now - started < .seconds(60), "no waiting for the token's minute")
        }
    }

    @Test func aMovedClockPassesTheSessionsQuotaWindowAndEndsItsOutage() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let mine = mishap.session(), other = mishap.session()
            // The window slides: on a machine so loaded that a session's requests spread over
            // 9 s or more, the first of them may have left it, and a sixth is rightly answered;
            // what depends on that is checked only when the requests came closer together.
            var firsts: [ContinuousClock.Instant] = []
            for session in [mine, other, nil] {
                firsts.append(.now)
                for _ in 1...5 { #expect(try await Self.send(mishap, "GET", "/search?q=swift", session: session).status == 200) }
                let refused = try await Self.send(mishap, "GET", "/search?q=swift", session: session)
                guard ContinuousClock.now - firsts.last! < .seconds(9) else { continue }
                #expect(refused.status == 429)
                #expect(Int(refused.header("Retry-After") ?? "") ?? 0 >= 1, "\(refused.headers)")
            }
            try mine.advanceClock(by: .seconds(10))
            let passed = try await Self.send(mishap, "GET", "/search?q=swift", session: mine)
            #expect(passed.status == 200, "the window passed for this session")
            #expect(passed.header("RateLimit-Remaining") == "4", "the 5 requests left the window: \(passed.headers)")
            let otherStill = try await Self.send(mishap, "GET", "/search?q=swift", session: other)
            if ContinuousClock.now - firsts[1] < .seconds(9) { #expect(otherStill.status == 429, "another session keeps its count") }
            let noSessionStill = try await Self.send(mishap, "GET", "/search?q=swift", session: nil)
            if ContinuousClock.now - firsts[2] < .seconds(9) { #expect(noSessionStill.status == 429, "so do requests without a session") }

            // An outage window of 30 s (q=outage), ended by 30 s of the session's clock.
            let outage = mishap.session()
            #expect(try await Self.send(mishap, "GET", "/search?q=outage", session: outage).status == 503)
            #expect(try await Self.send(mishap, "GET", "/search?q=x", session: outage).status == 503)
            try outage.advanceClock(by: .seconds(20))
            #expect(try await Self.send(mishap, "GET", "/search?q=x", session: outage).status == 503)
            try outage.advanceClock(by: .seconds(10))
            #expect(try await Self.send(mishap, "GET", "/search?q=x", session: outage).status == 200, "the outage is over")
        }
    }

    /// A quota counted by a header value is shared by every session: a session's moved clock
    /// does not move it, even for that session's requests.
    @Test func aSharedQuotaKeepsTheServersTime() async throws {
        let yaml = """
            endpoint: GET /keyed
            quota: { limit: 1, window: 1m, per: headers.X-API-Key }
            rules:
              - { name: ok, respond: { text: ok } }
            """
        try await Mishap.withServer(scenarios: .yaml(yaml)) { mishap in
            let session = mishap.session()
            let key = ["X-API-Key": "k1"]
            #expect(try await Self.send(mishap, "GET", "/keyed", session: session, headers: key).status == 200)
            #expect(try await Self.send(mishap, "GET", "/keyed", session: session, headers: key).status == 429)
            try session.advanceClock(by: .seconds(120))
            #expect(try await Self.send(mishap, "GET", "/keyed", session: session, headers: key).status == 429)
        }
    }

    @Test func aMovedClockEndsTheSessionsRuntimeRulesAndResetForgetsTheOffset() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session(), other = mishap.session()
            try session.force("GET /search", rule: "down", for: .seconds(60))
            try other.force("GET /search", rule: "down", for: .seconds(60))
            #expect(try await Self.send(mishap, "GET", "/search?q=x", session: session).status == 503)
            try session.advanceClock(by: .seconds(60))
            #expect(mishap.runtimeRules(session: session).isEmpty)
            #expect(mishap.runtimeRules(session: other).count == 1)
            #expect(try await Self.send(mishap, "GET", "/search?q=x", session: session).status == 200)
            #expect(try await Self.send(mishap, "GET", "/search?q=x", session: other).status == 503)

            try session.resetClock()
            #expect(try session.clockOffset() == .zero)
            try session.advanceClock(by: .seconds(5))
            mishap.reset(session: session)
            #expect(try session.clockOffset() == .zero, "a session's reset forgets its clock")
            #expect(throws: SessionTimeError.self) { try session.advanceClock(by: .zero) }
        }
    }

    @Test func aScaledRetryAfterTakesAnHonestClientThroughMaintenanceInSeconds() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            try session.scaleRetryAfter(by: 0.01)
            let started = ContinuousClock.now
            var sent: [String?] = []
            var answer = try await Self.send(mishap, "GET", "/isUserNameAvailable?userName=maintenance", session: session)
            while answer.status == 500, let wait = answer.header("Retry-After").flatMap(Int.init), sent.count < 5 {
                sent.append(answer.header("Retry-After"))
                try await Task.sleep(for: .seconds(wait))
                answer = try await Self.send(mishap, "GET", "/isUserNameAvailable?userName=maintenance", session: session)
            }
            let took = ContinuousClock.now - started
            #expect(answer.status == 200)
            #expect(sent == ["1", "1"], "Retry-After: 17 at 0.01 is sent as 1")
            // Two waits of 1 s, not of 17 (a loaded machine may add some).
            #expect(took >= .seconds(2) && took < .seconds(17), "\(took)")
            #expect(mishap.requests(session: session).map(\.status) == [500, 500, 200])
            // The Retry-After check judged what was sent: 1 s, honoured.
            let checks = mishap.retries(session: session)
            #expect(checks.map(\.retryAfter) == ["1", "1"], "\(checks)")
            #expect(checks.allSatisfy { $0.honoured == true && $0.required == 1 }, "\(checks)")

            // Another session is sent the 17 the rule gives; and so is this one once the scale ends.
            let other = mishap.session()
            let unscaled = try await Self.send(mishap, "GET", "/isUserNameAvailable?userName=maintenance!", session: other)
            #expect(unscaled.header("Retry-After") == "17")
            try session.resetRetryAfterScale()
            let again = try await Self.send(mishap, "GET", "/isUserNameAvailable?userName=maintenance!", session: session)
            #expect(again.header("Retry-After") == "17")
            #expect(throws: SessionTimeError.self) { try session.scaleRetryAfter(by: 0) }
            #expect(throws: SessionTimeError.self) { try session.scaleRetryAfter(by: 1.5) }
        }
    }

    /// The Swift example of docs/moving-time.md, word for word.
    @Test func theDocumentationExample() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            let urlSession = URLSession(configuration: session.configuration)   // its requests carry the session

            // Sign in: the access token lives 60 s.
            var signIn = URLRequest(url: mishap.url("/token"))
            signIn.httpMethod = "POST"
            signIn.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            signIn.httpBody = Data("grant_type=password&username=john%40doe.com&password=onlyjohnknowsme".utf8)
            let (tokens, _) = try await urlSession.data(for: signIn)
            let token = try #require(try JSONSerialization.jsonObject(with: tokens) as? [String: Any])["access_token"] as? String
            var me = URLRequest(url: mishap.url("/me"))
            me.setValue("Bearer \(token ?? "")", forHTTPHeaderField: "Authorization")
            #expect(try await (urlSession.data(for: me).1 as? HTTPURLResponse)?.statusCode == 200)

            try session.advanceClock(by: .seconds(61))                          // a minute later, at once
            #expect(try await (urlSession.data(for: me).1 as? HTTPURLResponse)?.statusCode == 401)

            // Short waits: the Retry-After: 17 of maintenance is sent to this session as 1.
            try session.scaleRetryAfter(by: 0.01)
            let (_, answer) = try await urlSession.data(from: mishap.url("/isUserNameAvailable?userName=maintenance!"))
            #expect((answer as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After") == "1")
            urlSession.finishTasksAndInvalidate()
        }
    }
}
