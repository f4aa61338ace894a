import Foundation
import MishapService
import MishapTestSupport
import Testing

/// Sessions in the path, `requests/count` and the journal's header and body filters, and the
/// unmatched requests with their nearest rules, over real sockets.
@Suite(.onBlockingThreads) struct VerificationTests {
    @Test func aSessionInThePathIsASessionHeader() async throws {
        let harness = try TestServer()
        for _ in 1...3 { _ = try await harness.get("/__session/ui-1/isUserNameAvailable?userName=maintenance") }
        let entries = try await harness.journal("session=ui-1")
        #expect(entries.map { $0["status"] as? Int } == [500, 500, 200], "its own maintenance cycle")
        #expect(entries.allSatisfy { $0["path"] as? String == "/isUserNameAvailable" })
        // A header the client sent too is replaced by the path's session.
        _ = try await harness.send("GET", "/__session/ui-2/isUserNameAvailable?userName=someone", headers: ["X-Mishap-Session": "other"])
        #expect(try await harness.journal("session=ui-2").count == 1)
        #expect(try await harness.journal("session=other").isEmpty)
        #expect(try await harness.get("/__session/ui-3").status == 404, "the path / of the session: no endpoint")
        let missing = try await harness.get("/__session/")
        #expect(missing.status == 404 && missing.text.contains("/__session/ID/PATH"), "\(missing.text)")
        #expect(try await harness.get("/__sessions/x/isUserNameAvailable?userName=someone").status == 404, "not the prefix")

        var options = ServiceOptions()
        options.sessionPrefix = nil
        let off = try TestServer(options: options)
        #expect(try await off.get("/__session/a/isUserNameAvailable?userName=someone").status == 404)
    }

    @Test func countAndFilters() async throws {
        let harness = try TestServer()
        for email in ["a@x.com", "b@x.com", "a@x.com"] {
            _ = try await harness.post("/login", json: ["email": email, "password": "secret"])
        }
        _ = try await harness.send("GET", "/isUserNameAvailable?userName=someone", headers: ["Authorization": "Bearer t1"])
        #expect((try await harness.admin("requests/count?path=/login"))["count"] as? Int == 3)
        #expect((try await harness.admin("requests/count?body=a@x.com"))["count"] as? Int == 2)
        #expect((try await harness.admin("requests/count?header=authorization:Bearer%20t1"))["count"] as? Int == 1)
        #expect((try await harness.admin("requests/count?header=Authorization:Bearer%20t2"))["count"] as? Int == 0)
        #expect(try await harness.journal("body=b@x.com").count == 1)
        #expect(try await harness.send("GET", "/__mishap/requests/count?header=nocolon").status == 400)
        #expect(try await harness.send("GET", "/__mishap/requests/count?limit=1").status == 400, "count takes no limit")
    }

    @Test func unmatchedRequestsSayWhatNearlyMatched() async throws {
        let harness = try TestServer(yaml: """
            endpoints:
              - endpoint: GET /users/{id}
                rules:
                  - name: admin
                    when: { query: { role: [admin, superuser] }, path: { id: "1" } }
                    respond: { text: admin }
                  - name: byName
                    when: { query: { name: { prefix: j } } }
                    respond: { text: j }
              - endpoint: POST /login
                rules:
                  - name: ok
                    respond: { text: ok }
            """)
        _ = try await harness.get("/users/1?role=amdin", session: "u")
        _ = try await harness.get("/login")
        _ = try await harness.get("/logn")
        let answer = try await harness.admin("unmatched")
        let items = try #require(answer["unmatched"] as? [[String: Any]])
        try #require(items.count == 3)
        let first = try #require(items[0]["nearMisses"] as? [[String: Any]])
        #expect(first.first?["rule"] as? String == "admin")
        #expect(first.first?["reason"] as? String == #"query role: expected one of [admin, superuser], got "amdin""#)
        #expect(first.dropFirst().first?["reason"] as? String == "query name: it is missing" || first.count == 2)
        #expect(items[0]["session"] as? String == "u")
        #expect((items[1]["nearMisses"] as? [[String: Any]])?.first?["reason"] as? String == "the path is right, the method is not: GET sent, POST expected")
        #expect(((items[2]["nearMisses"] as? [[String: Any]])?.first?["reason"] as? String)?.contains("did you mean /login?") == true)
        #expect(((try await harness.admin("unmatched?session=u"))["unmatched"] as? [Any])?.count == 1)
        _ = try await harness.admin("reset?session=u", method: "POST")
        #expect(((try await harness.admin("unmatched"))["unmatched"] as? [Any])?.count == 2)
    }
}
