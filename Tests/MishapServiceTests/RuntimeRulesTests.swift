import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// `POST /__mishap/rules`, `GET`, `DELETE /__mishap/rules/ID`, `POST /__mishap/force`, over
/// real sockets: sessions, `times`, `ttl`, located problems, limits, resets and reloads.
@Suite(.onBlockingThreads) struct RuntimeRulesTests {
    static let down = "endpoint: GET /isUserNameAvailable\nrules:\n  - name: down\n    respond: { status: 503, text: down }\n"

    static func add(_ harness: TestServer, _ yaml: String, _ query: String = "") async throws -> ClientResponse {
        try await harness.send("POST", "/__mishap/rules" + (query.isEmpty ? "" : "?" + query), body: Data(yaml.utf8))
    }

    @Test func rulesForASessionAnswerItsRequestsOnly() async throws {
        let harness = try TestServer()
        let added = try await Self.add(harness, Self.down, "session=a")
        #expect(added.status == 201, "\(added.text)")
        let id = try #require(added.json?["id"] as? String)
        #expect(added.json?["session"] as? String == "a")
        #expect(added.json?["endpoints"] as? [String] == ["GET /isUserNameAvailable"])
        #expect(try await harness.get("/isUserNameAvailable?userName=someone", session: "a").text == "down")
        #expect(try await harness.get("/isUserNameAvailable?userName=someone", session: "b").status == 200)
        #expect(try await harness.get("/isUserNameAvailable?userName=someone").status == 200)
        // The journal says which runtime rule answered.
        let entry = try #require(try await harness.journal("session=a").last)
        #expect(entry["rule"] as? String == "down" && entry["runtimeRule"] as? String == id)

        let listed = try await harness.admin("rules?session=a")
        #expect((listed["rules"] as? [[String: Any]])?.map { $0["id"] as? String } == [id])
        #expect(((try await harness.admin("rules?session=b"))["rules"] as? [Any])?.isEmpty == true)

        let deleted = try await harness.send("DELETE", "/__mishap/rules/\(id)")
        #expect(deleted.status == 200 && deleted.json?["deleted"] as? String == id)
        #expect(try await harness.get("/isUserNameAvailable?userName=someone", session: "a").status == 200)
        #expect(try await harness.send("DELETE", "/__mishap/rules/\(id)").status == 404)
        #expect(try await harness.send("GET", "/__mishap/rules/\(id)").status == 405)
    }

    @Test func timesAreExactUnderConcurrentRequests() async throws {
        let harness = try TestServer()
        #expect(try await Self.add(harness, Self.down, "times=7").status == 201)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<40 { group.addTask { try await harness.get("/isUserNameAvailable?userName=someone").status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 503 }.count == 7)
        #expect(statuses.filter { $0 == 200 }.count == 33)
        #expect(((try await harness.admin("rules"))["rules"] as? [Any])?.isEmpty == true, "used up, it is gone")
    }

    @Test func aTTLLetsRulesExpire() async throws {
        // A clock moved by hand: a loaded machine may take longer than the ttl between two requests.
        let clock = ManualClock()
        let harness = try TestServer(options: ServiceOptions(engine: EngineOptions(clock: clock.function)))
        let added = try await Self.add(harness, Self.down, "ttl=0.5")
        #expect(added.json?["expiresInMs"] as? Int == 500, "\(added.text)")
        #expect(try await harness.get("/isUserNameAvailable?userName=someone").status == 503)
        clock.advance(499)
        #expect(try await harness.get("/isUserNameAvailable?userName=someone").status == 503)
        clock.advance(1)
        #expect(try await harness.get("/isUserNameAvailable?userName=someone").status == 200)
        #expect(((try await harness.admin("rules"))["rules"] as? [Any])?.isEmpty == true, "expired, it is gone")
    }

    @Test func newerRulesComeFirstAndSessionRulesBeforeGlobalOnes() async throws {
        let harness = try TestServer()
        func rule(_ text: String) -> String { "endpoint: GET /x\nrules:\n  - name: r\n    respond: { text: \(text) }\n" }
        _ = try await Self.add(harness, rule("older"))
        _ = try await Self.add(harness, rule("mine"), "session=s")
        _ = try await Self.add(harness, rule("newer"))
        #expect(try await harness.get("/x").text == "newer")
        #expect(try await harness.get("/x", session: "s").text == "mine")
    }

    @Test func problemsAreLocatedAndNothingIsHalfAdded() async throws {
        let harness = try TestServer()
        let bad = try await Self.add(harness, """
            endpoints:
              - endpoint: GET /ok
                rules:
                  - name: fine
                    respond: { text: fine }
              - endpoint: GET /bad
                rules:
                  - name: broken
                    respond: { status: 999 }
            """)
        #expect(bad.status == 422)
        #expect(bad.json?["problems"] as? [String] == ["body:9:28: 'status' must be an HTTP status code from 100 to 599"], "\(bad.text)")
        #expect(try await harness.get("/ok").status == 404, "nothing was added")
        for (yaml, problem) in [
            ("endpoint: GET /x\nrules:\n  - name: a\n    respond: { text: \"{{state.nope}}\" }\n", "state value 'nope' is not declared"),
            ("state: { a: 1 }\nendpoint: GET /x\nrules:\n  - name: a\n    respond: { text: x }\n", "use the state the scenario files declare"),
            ("extends: GET /isUserNameAvailable\nrules:\n  - name: a\n    respond: { text: x }\n", "declare their endpoint with 'endpoint:'"),
            ("endpoint: GET /x\nrules: [\n", "YAML syntax"),
        ] {
            let answer = try await Self.add(harness, yaml)
            #expect(answer.status == 422, "\(answer.text)")
            #expect((answer.json?["problems"] as? [String])?.first?.contains(problem) == true, "\(answer.text)")
        }
        for query in ["times=0", "times=x", "ttl=0", "ttl=-1", "ttl=100000", "sesion=a", "session="] {
            #expect(try await Self.add(harness, Self.down, query).status == 400, "\(query)")
        }
        #expect(try await Self.add(harness, "   ").status == 400)
    }

    @Test func limitsRefuseWith507() async throws {
        var options = ServiceOptions()
        options.maxRuntimeRules = 3
        options.maxRuntimeRulesPerSession = 2
        let harness = try TestServer(options: options)
        #expect(try await Self.add(harness, Self.down, "session=a").status == 201)
        #expect(try await Self.add(harness, Self.down, "session=a").status == 201)
        let perSession = try await Self.add(harness, Self.down, "session=a")
        #expect(perSession.status == 507 && perSession.text.contains("--max-runtime-rules-per-session"), "\(perSession.text)")
        #expect(try await Self.add(harness, Self.down, "session=b").status == 201)
        let total = try await Self.add(harness, Self.down, "session=c")
        #expect(total.status == 507 && total.text.contains("--max-runtime-rules"), "\(total.text)")
        _ = try await harness.admin("reset?session=a", method: "POST")
        #expect(try await Self.add(harness, Self.down, "session=c").status == 201, "a session's reset removed its rules")
    }

    @Test func forceMakesAFileRuleAnswer() async throws {
        let harness = try TestServer()
        let forced = try await harness.send("POST", "/__mishap/force?endpoint=post%20/login&rule=MAINTENANCE&times=2&session=f")
        #expect(forced.status == 201, "\(forced.text)")
        #expect(forced.json?["rules"] as? [String] == ["maintenance"] && forced.json?["forced"] as? Bool == true)
        let login = ["email": "john@doe.com", "password": "onlyjohnknowsme"]
        func status(_ session: String?) async throws -> Int {
            try await harness.send("POST", "/login", body: JSONSerialization.data(withJSONObject: login),
                                   headers: ["Content-Type": "application/json"].merging(session.map { ["X-Mishap-Session": $0] } ?? [:]) { a, _ in a }).status
        }
        #expect(try await status("f") == 500)
        #expect(try await status("f") == 500)
        #expect(try await status("f") == 200)
        #expect(try await status(nil) == 200)
        let unknown = try await harness.send("POST", "/__mishap/force?endpoint=POST%20/logn&rule=maintenance")
        #expect(unknown.status == 400 && unknown.text.contains("did you mean 'POST /login'?"), "\(unknown.text)")
        let rule = try await harness.send("POST", "/__mishap/force?endpoint=POST%20/login&rule=maintenanc")
        #expect(rule.status == 400 && rule.text.contains("did you mean 'maintenance'?"), "\(rule.text)")
        #expect(try await harness.send("POST", "/__mishap/force?endpoint=POST%20/login").status == 400)
    }

    @Test func rulesSurviveAReloadOfTheFiles() async throws {
        let folder = try TemporaryFolder()
        let file = try folder.write("a.yaml", "state: { n: 0 }\nendpoint: GET /a\nrules:\n  - name: a\n    respond: { text: a }\n")
        let harness = try TestServer(directory: folder.path)
        let runtime = "endpoint: GET /r\nrules:\n  - name: r\n    set: { n: { increment: 1 } }\n    respond: { text: \"n={{state.n}}\" }\n"
        #expect(try await Self.add(harness, runtime).status == 201)
        #expect(try await Self.add(harness, "endpoint: GET /plain\nrules:\n  - name: p\n    respond: { text: plain }\n").status == 201)
        #expect(try await harness.get("/r").text == "n=1")
        try "state: { m: 0 }\nendpoint: GET /a\nrules:\n  - name: a\n    respond: { text: b }\n".write(toFile: file, atomically: true, encoding: .utf8)
        _ = try await harness.admin("reload", method: "POST")
        #expect(try await harness.get("/a").text == "b")
        #expect(try await harness.get("/plain").text == "plain", "kept over the reload")
        #expect(try await harness.get("/r").status == 404, "its state is gone: dropped")
        let scenarios = try await harness.admin("scenarios")
        #expect((scenarios["runtimeRules"] as? [[String: Any]])?.count == 1)
    }
}
