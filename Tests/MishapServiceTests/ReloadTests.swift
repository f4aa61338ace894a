import Foundation
import MishapScenarios
import MishapService
import MishapTestSupport
import Testing

/// Reloading: scenarios swapped whole, unchanged cycles keeping their places, broken scenarios
/// refused with located problems while the old ones keep answering.
@Suite(.onBlockingThreads) struct ReloadTests {
    static func yaml(lastStep: String = "three", extra: String = "") -> String {
        """
        endpoints:
          - endpoint: GET /steps
            rules:
              - name: steps
                cycle:
                  - { status: 500, text: one }
                  - { status: 502, text: two }
                  - { status: 503, text: \(lastStep) }
          - endpoint: GET /other
            rules:
              - name: other
                respond: { text: other }
        \(extra)
        """
    }

    static let added = """
          - endpoint: GET /added
            rules:
              - name: added
                respond: { text: added }
        """

    /// A reload that leaves a cycle rule as it was keeps its position (one request before, the
    /// next one after gets step 2) while new endpoints answer; one that changes the rule starts
    /// it over.
    @Test func unchangedCyclesKeepTheirPlace() async throws {
        let harness = try TestServer(yaml: Self.yaml())
        #expect(try await harness.get("/steps").text == "one")
        #expect(try await harness.get("/added").status == 404)

        let kept = try harness.service.reload(yaml: Self.yaml(extra: Self.added), name: "t.yaml")
        #expect(kept.cyclesKept == 1)
        #expect(kept.endpoints == 3)
        #expect(kept.rules == 3)
        #expect(kept.files == 1)
        #expect(try await harness.get("/steps").text == "two")
        #expect(try await harness.get("/added").text == "added")

        let changed = try harness.service.reload(yaml: Self.yaml(lastStep: "THREE"), name: "t.yaml")
        #expect(changed.cyclesKept == 0)
        #expect(try await harness.get("/steps").text == "one")
        #expect(try await harness.get("/steps").text == "two")
        #expect(try await harness.get("/steps").text == "THREE")
        #expect(try await harness.get("/added").status == 404)
        #expect(harness.service.reloads == 2)
    }

    /// Session positions carry over an unchanged reload too.
    @Test func sessionPositionsCarryOver() async throws {
        let harness = try TestServer(yaml: Self.yaml())
        #expect(try await harness.get("/steps", session: "a").text == "one")
        #expect(try await harness.get("/steps", session: "a").text == "two")
        #expect(try await harness.get("/steps", session: "b").text == "one")
        try harness.service.reload(yaml: Self.yaml(), name: "t.yaml")
        #expect(try await harness.get("/steps", session: "a").text == "three")
        #expect(try await harness.get("/steps", session: "b").text == "two")
    }

    /// A broken reload throws `ScenarioError` located as file:line:column, is remembered in
    /// `lastReloadFailure` and the health report, and the old rules keep answering (their cycle
    /// going on); a good reload afterwards clears the failure.
    @Test func invalidReloadKeepsTheOldRules() async throws {
        let harness = try TestServer(yaml: Self.yaml())
        #expect(try await harness.get("/steps").text == "one")

        let broken = """
            endpoint: GET /steps
            rules:
              - name: steps
                respond: { stauts: 500 }
            """
        let error = try #require(throws: ScenarioError.self) {
            try harness.service.reload(yaml: broken, name: "broken.yaml")
        }
        try #require(error.diagnostics.count == 1)
        let problem = error.diagnostics[0]
        #expect(problem.file == "broken.yaml")
        #expect(problem.line == 4)
        #expect(problem.column == 16)
        #expect(problem.message.contains("unknown key 'stauts'"))
        #expect(problem.description.hasPrefix("broken.yaml:4:16: unknown key 'stauts'"))
        #expect(harness.service.lastReloadFailure?.diagnostics == error.diagnostics)
        #expect(harness.service.reloads == 0)

        #expect(try await harness.get("/steps").text == "two")
        #expect(try await harness.get("/other").text == "other")
        let health = try await harness.admin("health")
        #expect(health["lastReloadFailed"] as? Bool == true)
        #expect(health["reloads"] as? Int == 0)

        try harness.service.reload(yaml: Self.yaml(), name: "t.yaml")
        #expect(harness.service.lastReloadFailure == nil)
        #expect(try await harness.get("/steps").text == "three")
        #expect(try await harness.admin("health")["lastReloadFailed"] as? Bool == false)
    }

    /// `POST /__mishap/reload` on a folder source reads the folder again: 200 with the counts,
    /// or 422 with the located problems while the previous scenarios keep serving.
    @Test func reloadOverHTTP() async throws {
        let folder = try TemporaryFolder()
        try folder.write("a.yaml", """
            endpoint: GET /a
            rules:
              - name: a
                cycle: [ { text: a1 }, { text: a2 } ]
            """)
        try folder.write("b.yaml", """
            endpoint: GET /b
            rules:
              - name: b
                respond: { text: b1 }
            """)
        let harness = try TestServer(directory: folder.path)
        #expect(try await harness.get("/a").text == "a1")
        #expect(try await harness.get("/b").text == "b1")

        try folder.write("b.yaml", """
            endpoint: GET /b
            rules:
              - name: b
                respond: { text: b2 }
              - name: spare
                respond: { text: spare }
            """)
        let reloaded = try await harness.admin("reload", method: "POST")
        #expect(reloaded["reloaded"] as? Bool == true)
        #expect(reloaded["files"] as? Int == 2)
        #expect(reloaded["endpoints"] as? Int == 2)
        #expect(reloaded["rules"] as? Int == 3)
        #expect(reloaded["cyclesKept"] as? Int == 1)
        #expect(try await harness.get("/b").text == "b2")
        #expect(try await harness.get("/a").text == "a2")

        try folder.write("b.yaml", """
            endpoint: GET /b
            rules:
              - name: b
                respond: { status: 999 }
            """)
        let refused = try await harness.send("POST", "/__mishap/reload")
        #expect(refused.status == 422)
        let json = try #require(refused.json)
        #expect(json["error"] as? Bool == true)
        let problems = try #require(json["problems"] as? [String])
        try #require(problems.count == 1)
        #expect(problems[0].hasPrefix(folder.path + "/b.yaml:4:"))
        #expect(try await harness.get("/b").text == "b2")
        #expect(try await harness.get("/a").text == "a1")
        #expect(harness.service.reloads == 1)
    }
}
