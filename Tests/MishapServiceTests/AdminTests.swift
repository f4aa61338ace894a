import Foundation
import MishapEngine
import MishapScenarios
import MishapService
import MishapTestSupport
import Testing

/// The admin API's answers besides the journal: errors, the loopback rule, turning it off, and
/// `GET /__mishap/scenarios`.
@Suite(.onBlockingThreads) struct AdminTests {
    static let yaml = """
        endpoint: GET /hello
        rules:
          - name: hello
            respond: { text: hi }
        """

    /// An unknown admin endpoint is a 404 in JSON naming the ones there are.
    @Test func unknownEndpointIs404() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let response = try await harness.send("GET", "/__mishap/nope")
        #expect(response.status == 404)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        let json = try #require(response.json)
        #expect(json["error"] as? Bool == true)
        let reason = try #require(json["reason"] as? String)
        #expect(reason.contains("/__mishap/nope"))
        #expect(reason.contains("/__mishap/health") && reason.contains("/__mishap/requests"))
    }

    /// The wrong method is a 405 with `Allow`: `POST` for reset and reload, `GET, HEAD` for the
    /// reading endpoints; a 405 changes nothing.
    @Test func wrongMethodIs405() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        _ = try await harness.get("/hello")
        let reset = try await harness.send("GET", "/__mishap/reset")
        #expect(reset.status == 405)
        #expect(reset.header("Allow") == "POST")
        #expect(reset.json?["error"] as? Bool == true)
        #expect(try await harness.journal().count == 1)

        let reload = try await harness.send("GET", "/__mishap/reload")
        #expect(reload.status == 405)
        #expect(reload.header("Allow") == "POST")

        let health = try await harness.send("POST", "/__mishap/health")
        #expect(health.status == 405)
        #expect(health.header("Allow") == "GET, HEAD")
    }

    /// The admin API answers loopback clients only: a request from elsewhere gets 403, while
    /// the loopback client on a real socket gets the health report.
    @Test func loopbackOnly() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let remote = harness.service.respond(to: Request(method: "GET", path: "/__mishap/health", fromLoopback: false))
        #expect(remote.status == 403)
        let remoteJSON = try #require((try? JSONSerialization.jsonObject(with: Data(remote.body))) as? [String: Any])
        #expect(remoteJSON["error"] as? Bool == true)
        #expect(remote.bookkeeping.endpoint == nil && remote.bookkeeping.rule == nil)

        let health = try await harness.admin("health")
        #expect(health["status"] as? String == "ok")
        #expect(health["endpoints"] as? Int == 1)
        #expect(health["rules"] as? Int == 1)
        #expect(health["reloads"] as? Int == 0)
        #expect(health["lastReloadFailed"] as? Bool == false)
        let withSlash = try await harness.send("GET", "/__mishap/health/")
        #expect(withSlash.status == 200)
    }

    /// With `admin: false`, `/__mishap/` is an ordinary path: the scenarios answer it (the
    /// engine's 404 here) and it is journaled like any request.
    @Test func adminOff() async throws {
        let harness = try TestServer(yaml: Self.yaml, options: ServiceOptions(admin: false))
        let response = try await harness.send("GET", "/__mishap/health")
        #expect(response.status == 404)
        #expect(response.text == #"{"error":true,"reason":"Not Found"}"#)
        #expect(Array(response.body) == Engine.notFoundBody)
        #expect(try await harness.send("POST", "/__mishap/reset").status == 404)
        #expect(try await harness.get("/hello").text == "hi")
        let recorded = harness.service.journal.entries().entries.map(\.path)
        #expect(recorded == ["/__mishap/health", "/__mishap/reset", "/hello"])
    }

    /// `GET /__mishap/scenarios` lists the files read, each endpoint (method, path, where it is
    /// declared) and its rules with where each is declared; after a failed reload it also lists
    /// the problems.
    @Test func scenariosListing() async throws {
        let folder = try TemporaryFolder()
        try folder.write("a.yaml", """
            endpoint: GET /alpha/{id}
            rules:
              - name: one
                respond: { text: a }
              - name: two
                respond: { text: b }
            """)
        try folder.write("b.yaml", """
            endpoints:
              - endpoint: POST /beta
                rules:
                  - name: three
                    cycle: [ { status: 500 }, pass ]
                  - name: four
                    respond: { status: 201 }
            """)
        let harness = try TestServer(directory: folder.path)
        let a = folder.path + "/a.yaml", b = folder.path + "/b.yaml"

        let listing = try await harness.admin("scenarios")
        #expect(listing["files"] as? [String] == [a, b])
        #expect(listing["lastReloadErrors"] == nil)
        let endpoints = try #require(listing["endpoints"] as? [[String: Any]])
        try #require(endpoints.count == 2)
        #expect(endpoints[0]["method"] as? String == "GET")
        #expect(endpoints[0]["path"] as? String == "/alpha/{id}")
        #expect(endpoints[0]["source"] as? String == "\(a):1")
        #expect(endpoints[1]["method"] as? String == "POST")
        #expect(endpoints[1]["path"] as? String == "/beta")
        #expect(endpoints[1]["source"] as? String == "\(b):2")

        func rules(_ endpoint: [String: Any]) -> [String] {
            (endpoint["rules"] as? [[String: Any]] ?? []).map { "\($0["name"] as? String ?? "?") \($0["source"] as? String ?? "?")" }
        }
        #expect(rules(endpoints[0]) == ["one \(a):3", "two \(a):5"])
        #expect(rules(endpoints[1]) == ["three \(b):4", "four \(b):6"])

        try folder.write("b.yaml", "endpoint: POST /beta\nrules: 7\n")
        #expect(throws: ScenarioError.self) { try harness.service.reload() }
        let afterFailure = try await harness.admin("scenarios")
        #expect((afterFailure["endpoints"] as? [Any])?.count == 2)
        let problems = try #require(afterFailure["lastReloadErrors"] as? [String])
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix("\(b):2:") == true)
    }
}
