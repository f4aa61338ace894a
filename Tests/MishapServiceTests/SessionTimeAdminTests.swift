import Foundation
import MishapEngine
@testable import MishapService
import MishapSupport
import MishapTestSupport
import Testing

/// `/__mishap/clock` and `/__mishap/sessions/ID` over real sockets with URLSession: a session's
/// clock moved forward ends its state values set for a while and passes its quota windows, and
/// no other session's nor the shared ones; the offset survives a reload and ends with a reset;
/// a session's scale rewrites the Retry-After, RateLimit-Reset and RateLimit `t=` it is sent
/// (seconds and HTTP dates), and the Retry-After check sees what was sent. Malformed calls are 400s naming
/// the parameter.
@Suite(.onBlockingThreads) struct SessionTimeAdminTests {
    static let yaml = """
        state:
          on: false
        endpoints:
          - endpoint: POST /on
            rules:
              - { name: on, set: { on: { value: true, for: 60s } }, respond: { text: set } }
          - endpoint: GET /check
            rules:
              - { name: on, when: { state: { on: true } }, respond: { text: "on" } }
              - { name: off, respond: { text: "off" } }
          - endpoint: GET /limited
            quota: { limit: 1, window: 1m }
            rules:
              - { name: ok, respond: { text: ok } }
          - endpoint: GET /draft
            quota: { limit: 1, window: 1m, headers: draft }
            rules:
              - { name: ok, respond: { text: ok } }
          - endpoint: GET /dated
            quota: { limit: 1, window: 1m, retryAfter: date }
            rules:
              - { name: ok, respond: { text: ok } }
        """

    static func headers(_ session: String?) -> [String: String] {
        session.map { ["X-Mishap-Session": $0] } ?? [:]
    }

    @Test func theClockOfOneSessionMovesAndNoOther() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        for session in ["a", "b", nil] {
            #expect(try await harness.send("POST", "/on", headers: Self.headers(session)).text == "set")
        }
        #expect(try await harness.admin("clock?session=a")["offsetMs"] as? Int == 0)

        let moved = try await harness.admin("clock?session=a&advance=30s", method: "POST")
        #expect(moved["session"] as? String == "a" && moved["offsetMs"] as? Int == 30_000, "\(moved)")
        let state = try await harness.admin("state?session=a")
        let remaining = try #require(((state["state"] as? [String: Any])?["on"] as? [String: Any])?["expiresInMs"] as? Int)
        #expect(remaining <= 30_000 && remaining > 20_000, "60 s less the 30 s the clock moved: \(remaining)")
        #expect(try await harness.get("/check", session: "a").text == "on")
        #expect(try await harness.admin("clock?session=a&advance=30000ms", method: "POST")["offsetMs"] as? Int == 60_000, "offsets add up")
        #expect(try await harness.get("/check", session: "a").text == "off", "the session's 60 s passed")
        #expect(try await harness.get("/check", session: "b").text == "on", "another session keeps the server's time")
        #expect(try await harness.get("/check").text == "on", "so do requests without a session")
        #expect(try await harness.admin("clock?session=b")["offsetMs"] as? Int == 0)

        // A quota counted per session: the window passes for the moved session alone.
        for session in ["a", "b"] {
            #expect(try await harness.get("/limited", session: session).status == 200)
            #expect(try await harness.get("/limited", session: session).status == 429)
        }
        _ = try await harness.admin("clock?session=a&advance=1m", method: "POST")
        #expect(try await harness.get("/limited", session: "a").status == 200)
        #expect(try await harness.get("/limited", session: "b").status == 429)

        // The offset outlives a reload; GET /__mishap/sessions/a shows it too.
        try harness.service.reload(yaml: Self.yaml)
        #expect(try await harness.admin("clock?session=a")["offsetMs"] as? Int == 120_000)
        #expect(try await harness.admin("sessions/a")["clockOffsetMs"] as? Int == 120_000)
        #expect(harness.service.clockOffset(session: "a") == 120_000)
        #expect(harness.service.clockOffset(session: nil) == 0)

        // reset=true forgets it; so does a reset of the session.
        #expect(try await harness.admin("clock?session=a&reset=true", method: "POST")["offsetMs"] as? Int == 0)
        _ = try await harness.admin("clock?session=a&advance=5", method: "POST")
        #expect(try await harness.admin("clock?session=a")["offsetMs"] as? Int == 5000, "a bare number is seconds")
        _ = try await harness.admin("reset?session=a", method: "POST")
        #expect(try await harness.admin("clock?session=a")["offsetMs"] as? Int == 0)
    }

    /// Rules added at runtime: their quotas counted per session pass with the session's clock,
    /// and their ttl runs out with it.
    @Test func runtimeRulesMoveWithTheSessionsClock() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let rules = """
            endpoint: GET /runtime
            quota: { limit: 1, window: 1m }
            rules:
              - { name: ok, respond: { text: ok } }
            """
        let added = try await harness.send("POST", "/__mishap/rules", body: Data(rules.utf8))
        #expect(added.status == 201, "\(added.text)")
        let timed = try await harness.send("POST", "/__mishap/force?endpoint=GET%20/check&rule=on&session=q&ttl=60", body: nil)
        #expect(timed.status == 201, "\(timed.text)")
        for session in ["q", "r"] {
            #expect(try await harness.get("/runtime", session: session).status == 200)
            #expect(try await harness.get("/runtime", session: session).status == 429)
        }
        #expect(try await harness.get("/check", session: "q").text == "on", "forced for 60 s")
        _ = try await harness.admin("clock?session=q&advance=60s", method: "POST")
        #expect(try await harness.get("/runtime", session: "q").status == 200, "the session's window passed")
        #expect(try await harness.get("/runtime", session: "r").status == 429, "another session's did not")
        #expect(try await harness.get("/check", session: "q").text == "off", "the forced rule's 60 s passed")
        let left = try #require(try await harness.admin("rules")["rules"] as? [[String: Any]])
        #expect(left.count == 1 && left.first?["session"] is NSNull, "\(left)")
    }

    @Test(arguments: [
        ("GET", "clock", 400, "'session' is required"),
        ("POST", "clock?advance=5s", 400, "'session' is required"),
        ("POST", "clock?session=a", 400, "takes 'advance'"),
        ("POST", "clock?session=a&advance=soon", 400, "'advance' must be a duration"),
        ("POST", "clock?session=a&advance=0", 400, "'advance' must be a duration over 0"),
        ("POST", "clock?session=a&advance=2d", 400, "'advance' must be a duration"),
        ("POST", "clock?session=a&advance=5s&reset=true", 400, "not both"),
        ("POST", "clock?session=a&reset=yes", 400, "'reset' takes true"),
        ("GET", "clock?session=a&advance=5s", 400, "go with POST"),
        ("POST", "clock?session=a&advence=5s", 400, "unknown query parameter 'advence' (did you mean 'advance'?)"),
        ("DELETE", "clock?session=a", 405, "takes GET or POST"),
        ("POST", "sessions/a", 400, "takes retryAfterScale"),
        ("POST", "sessions/a?retryAfterScale=0", 400, "'retryAfterScale' must be a number over 0 and at most 1"),
        ("POST", "sessions/a?retryAfterScale=1.5", 400, "'retryAfterScale' must be a number over 0 and at most 1"),
        ("POST", "sessions/a?retryAfterScale=fast", 400, "'retryAfterScale' must be a number"),
        ("POST", "sessions/a?retryAfterScale=nan", 400, "'retryAfterScale' must be a number"),
        ("POST", "sessions/a?scale=0.5", 400, "unknown query parameter 'scale'"),
        ("GET", "sessions/a?retryAfterScale=0.5", 400, "unknown query parameter 'retryAfterScale'"),
        ("PUT", "sessions/a", 405, "takes GET, POST or DELETE"),
        ("GET", "sessions/", 404, "takes a session id"),
    ])
    func malformedCallsAreRefused(method: String, call: String, status: Int, reason: String) async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let answer = try await harness.send(method, "/__mishap/" + call)
        #expect(answer.status == status, "\(answer.text)")
        #expect((answer.json?["reason"] as? String)?.contains(reason) == true, "\(answer.text)")
        #expect(harness.service.clockOffset(session: "a") == 0)
        #expect(harness.service.retryAfterScale(session: "a") == nil)
    }

    @Test func aSessionsScaleRewritesTheWaitsItIsSent() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let fresh = try await harness.send("GET", "/__mishap/sessions/s1")
        #expect(fresh.text == #"{"session":"s1","retryAfterScale":null,"clockOffsetMs":0}"#, "\(fresh.text)")
        let set = try await harness.admin("sessions/s1?retryAfterScale=0.1", method: "POST")
        #expect(set["retryAfterScale"] as? Double == 0.1, "\(set)")

        for session in ["s1", "s2"] {
            let first = try await harness.get("/limited", session: session)
            #expect(first.status == 200)
            #expect(first.header("RateLimit-Reset") == (session == "s1" ? "6" : "60"), "\(first.headers)")
            let refused = try await harness.get("/limited", session: session)
            #expect(refused.status == 429)
            // 60 s less the moment since the first request, rounded up: 60 (55 or more when a
            // loaded machine takes seconds between the two), scaled to 6.
            for name in ["Retry-After", "RateLimit-Reset"] {
                let value = refused.header(name).flatMap { Int($0) }
                if session == "s1" {
                    #expect(value == 6, "\(refused.headers)")
                } else {
                    #expect(value.map { (55...60).contains($0) } == true, "\(refused.headers)")
                }
            }
        }
        // The Retry-After check judges what was sent.
        let retries = try #require(try await harness.admin("retries?session=s1")["retries"] as? [[String: Any]])
        #expect(retries.first?["retryAfter"] as? String == "6" && retries.first?["requiredMs"] as? Int == 6000, "\(retries)")

        // An HTTP date comes as close as its second allows: about 6 s away, not 60.
        #expect(try await harness.get("/dated", session: "s1").status == 200)
        let dated = try await harness.get("/dated", session: "s1")
        let date = try #require(dated.header("Retry-After").flatMap { WallClock.secondsSinceEpoch(httpDate: $0) })
        let away = date - Int64(WallClock.nowSeconds())
        #expect((5...8).contains(away), "\(dated.header("Retry-After") ?? "-"): \(away) s away")

        // The structured RateLimit field's t= too.
        #expect(try await harness.get("/draft", session: "s1").header("RateLimit") == #""default";r=0;t=6"#)

        // DELETE ends the scale (and the clock offset).
        _ = try await harness.admin("clock?session=s1&advance=1s", method: "POST")
        let ended = try await harness.admin("sessions/s1", method: "DELETE")
        #expect(ended["retryAfterScale"] is NSNull && ended["clockOffsetMs"] as? Int == 0, "\(ended)")
        #expect(try await harness.get("/limited", session: "s1").header("Retry-After") != "6")

        // A reset of everything ends every session's.
        _ = try await harness.admin("sessions/s3?retryAfterScale=0.5", method: "POST")
        _ = try await harness.admin("reset", method: "POST")
        #expect(try await harness.admin("sessions/s3")["retryAfterScale"] is NSNull)
    }

    @Test(arguments: [
        ("17", 0.01, "1"), ("0", 0.01, "0"), ("300", 0.01, "3"), ("3", 0.1, "1"), ("10", 0.5, "5"),
        ("11", 0.5, "6"), (" 17 ", 1.0, "17"), ("120", 0.25, "30"),
    ])
    func delaySecondsAreScaledAndRoundedUp(value: String, scale: Double, expected: String) {
        #expect(MishapService.scaledWait(value, by: scale, now: 0) == expected)
    }

    @Test func theStructuredRateLimitFieldIsScaled() {
        #expect(MishapService.scaledRateLimitField(#""default";r=0;t=17"#, by: 0.01) == #""default";r=0;t=1"#)
        #expect(MishapService.scaledRateLimitField(#""default";r=4;t=60, "burst";r=0;t=0"#, by: 0.1) == #""default";r=4;t=6, "burst";r=0;t=0"#)
        #expect(MishapService.scaledRateLimitField(#""default";r=1"#, by: 0.1) == #""default";r=1"#)
    }

    @Test func anHTTPDateIsBroughtCloser() {
        let now: Int64 = 1_800_000_000_500
        // 100 s away at 0.1: 10 s from now, rounded up to the next whole second.
        let date = WallClock.httpDate(secondsSinceEpoch: 1_800_000_100)
        #expect(MishapService.scaledWait(date, by: 0.1, now: now) == WallClock.httpDate(secondsSinceEpoch: 1_800_000_011))
        let past = WallClock.httpDate(secondsSinceEpoch: 1_700_000_000)
        #expect(MishapService.scaledWait(past, by: 0.1, now: now) == past)
        #expect(MishapService.scaledWait("soon", by: 0.1, now: now) == nil)
        #expect(MishapService.scaledWait("-3", by: 0.1, now: now) == nil)
    }
}
