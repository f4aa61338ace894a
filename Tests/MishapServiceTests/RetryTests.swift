import Foundation
import MishapService
import MishapTestSupport
import Testing

/// `GET /__mishap/retries`: whether a client told `Retry-After` waited before coming back to
/// the same endpoint, per session.
@Suite(.onBlockingThreads) struct RetryTests {
    static let yaml = """
        endpoints:
          - endpoint: GET /busy
            rules:
              - name: busy
                cycle:
                  - { status: 503, headers: { Retry-After: "30" }, text: later }
                  - pass
              - name: ok
                respond: { text: ok }
          - endpoint: GET /brief
            rules:
              - name: brief
                cycle:
                  - { status: 429, headers: { Retry-After: "1" }, text: slow down }
                  - pass
              - name: ok
                respond: { text: ok }
          - endpoint: GET /dated
            rules:
              - name: dated
                cycle:
                  - { status: 503, headers: { Retry-After: "{{now+1s}}" } }
                  - pass
              - name: ok
                respond: { text: ok }
          - endpoint: GET /datedlong
            rules:
              - name: datedLong
                cycle:
                  - { status: 503, headers: { Retry-After: "{{now+30s}}" } }
                  - pass
              - name: ok
                respond: { text: ok }
        """

    /// The observations `GET /__mishap/retries?QUERY` lists, after checking how many violations
    /// it counts and (when given) how many observations there are.
    func retries(_ harness: TestServer, _ query: String = "", violations: Int? = nil, count: Int? = nil,
                 sourceLocation: SourceLocation = #_sourceLocation) async throws -> [[String: Any]] {
        let answer = try await harness.admin("retries" + (query.isEmpty ? "" : "?" + query), sourceLocation: sourceLocation)
        let observations = try #require(answer["retries"] as? [[String: Any]], sourceLocation: sourceLocation)
        if let violations {
            #expect(answer["violations"] as? Int == violations, "violations", sourceLocation: sourceLocation)
        }
        if let count {
            try #require(observations.count == count, "\(observations)", sourceLocation: sourceLocation)
        }
        return observations
    }

    /// A client back at once after `Retry-After: 30` broke it (30 s: "at once" stays early on a loaded machine): `honoured` false, counted in
    /// `violations`. Another session's 503 is tracked on its own and stays open (honoured null)
    /// while that client has not come back; the first session's retry does not close it.
    @Test func earlyRetryIsAViolation() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let refused = try await harness.get("/busy", session: "s1")
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "30")
        #expect(try await harness.get("/busy", session: "s2").status == 503)
        #expect(try await harness.get("/busy", session: "s1").status == 200)

        let observation = try await retries(harness, "session=s1", violations: 1, count: 1)[0]
        #expect(observation["session"] as? String == "s1")
        #expect(observation["endpoint"] as? String == "GET /busy")
        #expect(observation["rule"] as? String == "busy")
        #expect(observation["status"] as? Int == 503)
        #expect(observation["retryAfter"] as? String == "30")
        #expect(observation["requiredMs"] as? Int == 30000)
        #expect(observation["honoured"] as? Bool == false)
        let waited = try #require(observation["waitedMs"] as? Int)
        #expect(waited >= 0 && waited < 30000)
        #expect(observation["nextRequestAt"] is String)

        let all = try await retries(harness, violations: 1)
        #expect(all.map { $0["session"] as? String } == ["s1", "s2"])
        let open = all[1]
        #expect(open["honoured"] is NSNull)
        #expect(open["nextRequestAt"] is NSNull)
        #expect(open["waitedMs"] is NSNull)

        _ = try await retries(harness, "session=s2", violations: 0)
        _ = try await retries(harness, "endpoint=GET%20/brief", count: 0)
    }

    /// A client that waits out `Retry-After: 1` (1.1 s) honoured it: `honoured` true, `waitedMs`
    /// at least 1000, no violation. A client coming back at once after an HTTP-date
    /// `Retry-After` 30 s ahead (`{{now+30s}}`) broke it; one waiting 1.1 s after a date 1 s ahead
    /// honoured it.
    @Test func waitingHonoursRetryAfter() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        #expect(try await harness.get("/brief", session: "patient").status == 429)
        let dated = try await harness.get("/dated", session: "patient")
        #expect(dated.status == 503)
        let datedLong = try await harness.get("/datedlong", session: "hasty")
        #expect(datedLong.status == 503)
        let dateHeader = try #require(datedLong.header("Retry-After"))
        #expect(dateHeader.wholeMatch(of: /[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT/) != nil)
        #expect(try await harness.get("/datedlong", session: "hasty").status == 200)

        try await Task.sleep(for: .milliseconds(1100))
        #expect(try await harness.get("/brief", session: "patient").status == 200)
        #expect(try await harness.get("/dated", session: "patient").status == 200)

        let patient = try await retries(harness, "session=patient", violations: 0, count: 2)
        let brief = patient[0]
        #expect(brief["endpoint"] as? String == "GET /brief")
        #expect(brief["retryAfter"] as? String == "1")
        #expect(brief["requiredMs"] as? Int == 1000)
        #expect(brief["honoured"] as? Bool == true)
        #expect((brief["waitedMs"] as? Int ?? 0) >= 1000)
        let date = patient[1]
        #expect(date["endpoint"] as? String == "GET /dated")
        #expect(date["retryAfter"] as? String == dated.header("Retry-After"))
        #expect(date["honoured"] as? Bool == true)
        // An HTTP date has whole seconds: 1 s ahead allows the client back within 1 s (the
        // date is cut to its second, so possibly a little less).
        let dateRequired = try #require(date["requiredMs"] as? Int)
        #expect(dateRequired > -100 && dateRequired <= 1000)

        let hasty = try await retries(harness, "session=hasty", violations: 1, count: 1)
        #expect(hasty[0]["retryAfter"] as? String == dateHeader)
        #expect(hasty[0]["honoured"] as? Bool == false)
        let hastyRequired = try #require(hasty[0]["requiredMs"] as? Int)
        #expect(hastyRequired > 28900 && hastyRequired <= 30000)

        _ = try await retries(harness, violations: 1)
    }

    /// `POST /__mishap/reset?session=` forgets that session's observations only.
    @Test func resetForgetsOneSession() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        for session in ["x", "y"] {
            #expect(try await harness.get("/busy", session: session).status == 503)
            #expect(try await harness.get("/busy", session: session).status == 200)
        }
        _ = try await retries(harness, violations: 2)
        _ = try await harness.admin("reset?session=x", method: "POST")
        let left = try await retries(harness, violations: 1)
        #expect(left.map { $0["session"] as? String } == ["y"])
    }
}
