import Foundation
import MishapTestSupport
import Testing

/// Every admin call refuses a query parameter it does not take, naming the ones it does, and
/// does nothing: a typo (`reset?sesion=s1`) must not wipe every session.
@Suite(.onBlockingThreads) struct AdminParameterTests {
    static let yaml = """
        endpoint: GET /hello
        rules:
          - name: flaky
            when: { query: { mode: cycle } }
            cycle: [{ status: 503, headers: { Retry-After: "1" } }, pass]
          - name: hello
            respond: { text: hi }
        """

    /// Each call, its method, and a parameter it does not take.
    static let calls: [(method: String, path: String, unknown: String, suggestion: String?)] = [
        ("POST", "reset", "sesion=s1", "session"),
        ("GET", "requests", "limt=1", "limit"),
        ("GET", "retries", "sessions=s1", "session"),
        ("GET", "health", "verbose=1", nil),
        ("GET", "scenarios", "file=x", nil),
        ("POST", "reload", "force=1", nil),
    ]

    @Test func unknownParametersAre400AndChangeNothing() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        // State a wrong reset would wipe: two journal entries and a cycle one step in, in session s2.
        _ = try await harness.get("/hello?mode=cycle", session: "s2")
        _ = try await harness.get("/hello", session: "s2")
        for call in Self.calls {
            let response = try await harness.send(call.method, "/__mishap/\(call.path)?\(call.unknown)")
            #expect(response.status == 400, "\(call.method) \(call.path)?\(call.unknown): \(response.text)")
            #expect(response.header("Content-Type") == "application/json; charset=utf-8")
            let reason = try #require(response.json?["reason"] as? String, "\(response.text)")
            let name = String(call.unknown.split(separator: "=")[0])
            #expect(reason.contains("unknown query parameter '\(name)'"), "\(reason)")
            if let suggestion = call.suggestion {
                #expect(reason.contains("did you mean '\(suggestion)'"), "\(reason)")
            } else {
                #expect(reason.contains("takes no query parameters"), "\(reason)")
            }
        }
        // Nothing was reset: the journal still has both requests, and the cycle goes on to `pass`.
        #expect(try await harness.journal("session=s2").count == 2)
        let next = try await harness.get("/hello?mode=cycle", session: "s2")
        #expect(next.status == 200 && next.text == "hi", "the cycle started over: \(next.status)")
    }

    @Test func knownParametersStillWorkAndRepeatsAre400() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        _ = try await harness.get("/hello", session: "a")
        _ = try await harness.get("/hello", session: "b")
        let twice = try await harness.send("POST", "/__mishap/reset?session=a&session=b")
        #expect(twice.status == 400, "\(twice.text)")
        #expect((twice.json?["reason"] as? String)?.contains("more than once") == true, "\(twice.text)")
        #expect(try await harness.journal().count == 2)
        _ = try await harness.admin("reset?session=a", method: "POST")
        #expect(try await harness.journal().count == 1)
        #expect(try await harness.journal("session=b&limit=5&path=/hello&method=GET&rule=hello&endpoint=GET%20/hello").count == 1)
        _ = try await harness.admin("retries?session=b&endpoint=GET%20/hello")
    }
}
