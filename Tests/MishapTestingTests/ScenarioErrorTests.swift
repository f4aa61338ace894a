import MishapTesting
import MishapTestSupport
import Testing

/// Scenarios with mistakes are refused with the place of each, as `file:line:column: message`.
@Suite(.onBlockingThreads) struct ScenarioErrorTests {
    /// A misspelt method stops the server from starting, pointing at line 1, column 11 of the inline text.
    @Test func misspeltMethodIsReportedWithItsPlace() throws {
        let error = #expect(throws: ScenarioError.self) {
            try Mishap.start(scenarios: .yaml("endpoint: GTE /x\nrules: []"))
        }
        #expect(error?.diagnostics == [ScenarioDiagnostic(
            file: "inline.yaml", line: 1, column: 11,
            message: "unknown method 'GTE' (did you mean 'GET'?); expected one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, ANY")])
        #expect(error?.description.hasPrefix("inline.yaml:1:11: unknown method 'GTE'") == true)
    }

    /// A broken reload is refused and the scenarios in force keep answering.
    @Test func brokenReloadKeepsThePreviousScenarios() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            #expect(throws: ScenarioError.self) {
                try mishap.reload(yaml: "endpoint: GET /x\nrules:\n  - name: x\n    respond: { stauts: 200 }", name: "broken.yaml")
            }
            let answer = try await mishap.client(in: mishap.session()).checkUserNameAvailable("someone")
            #expect(answer.isAvailable)
        }
    }
}
