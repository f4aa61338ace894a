import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// Rules added at runtime, indexed by session and path and bounded in bytes; over real sockets.
@Suite(.onBlockingThreads) struct RuntimeRuleLimitsTests {
    static func add(_ harness: TestServer, _ yaml: String, _ query: String = "") async throws -> ClientResponse {
        try await harness.send("POST", "/__mishap/rules" + (query.isEmpty ? "" : "?" + query), body: Data(yaml.utf8))
    }

    static func rule(_ path: String, _ text: String) -> String {
        "endpoint: GET \(path)\nrules:\n  - name: r\n    respond: { text: \(text) }\n"
    }

    /// Of the rules of a session and those for every request, at literal paths and at paths
    /// with parameters, a request is answered by the newest of its session's that matches,
    /// else by the newest for every request; rules on other paths change nothing.
    @Test func indexedRulesKeepTheirOrder() async throws {
        let harness = try TestServer()
        for index in 0..<300 {
            #expect(try await Self.add(harness, Self.rule("/other\(index)", "other"), "session=s").status == 201)
        }
        #expect(try await Self.add(harness, Self.rule("/items/{id}", "pattern-old"), "session=s").status == 201)
        #expect(try await Self.add(harness, Self.rule("/items/7", "literal"), "session=s").status == 201)
        #expect(try await Self.add(harness, Self.rule("/items/{id}", "pattern-new"), "session=s").status == 201)
        #expect(try await Self.add(harness, Self.rule("/items/7", "everyone")).status == 201)
        // Two endpoints of one addition at one path are one candidate.
        let both = "endpoints:\n  - endpoint: GET /both\n    rules:\n      - name: a\n        when: { query: { x: a } }\n        respond: { text: a }\n"
            + "  - endpoint: ANY /both\n    rules:\n      - name: b\n        respond: { text: b }\n"
        #expect(try await Self.add(harness, both, "times=2").status == 201)

        #expect(try await harness.get("/items/7", session: "s").text == "pattern-new")
        #expect(try await harness.get("/items/8", session: "s").text == "pattern-new")
        #expect(try await harness.get("/items/7").text == "everyone")
        #expect(try await harness.get("/items/8").status == 404)
        #expect(try await harness.get("/other12", session: "s").text == "other")
        #expect(try await harness.get("/other12").status == 404)
        #expect(try await harness.get("/isUserNameAvailable?userName=someone", session: "s").status == 200)

        let newest = try #require(try await harness.admin("rules?session=s")["rules"] as? [[String: Any]]).last
        #expect(try await harness.send("DELETE", "/__mishap/rules/\(try #require(newest?["id"] as? String))").status == 200)
        #expect(try await harness.get("/items/7", session: "s").text == "literal")
        #expect(try await harness.get("/items/8", session: "s").text == "pattern-old")

        #expect(try await harness.get("/both?x=a").text == "a")
        #expect(try await harness.get("/both").text == "b")
        #expect(try await harness.get("/both").status == 404, "its two answers are taken")
    }

    /// The bytes the runtime rules hold are bounded in all: an addition that would pass the
    /// budget is refused with 507 naming the flag, and what was added keeps answering.
    @Test func aByteBudgetRefusesWith507() async throws {
        var options = ServiceOptions()
        options.maxRuntimeRuleBytes = 300_000
        let harness = try TestServer(options: options)
        let big = String(repeating: "b", count: 100_000)
        #expect(try await Self.add(harness, Self.rule("/big1", big)).status == 201)
        let refused = try await Self.add(harness, Self.rule("/big2", big))
        #expect(refused.status == 507, "\(refused.text)")
        #expect(refused.text.contains("--max-runtime-rule-bytes"), "\(refused.text)")
        #expect(try await harness.get("/big1").body.count == 100_000)
        #expect(try await harness.get("/big2").status == 404)
        // Deleting one makes room again.
        let id = try #require((try await harness.admin("rules")["rules"] as? [[String: Any]])?.first?["id"] as? String)
        #expect(try await harness.send("DELETE", "/__mishap/rules/\(id)").status == 200)
        #expect(try await Self.add(harness, Self.rule("/big2", big)).status == 201)
        #expect(try await harness.get("/big2").body.count == 100_000)
    }
}
