import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// A rule that can never answer loads, with a warning naming it and the rule above it that
/// takes its requests; rules that can still be reached get none.
@Suite struct ScenarioWarningTests {
    static func warnings(_ yaml: String) throws -> [ScenarioDiagnostic] {
        try ScenarioLoader.load(yaml: yaml, name: "inline.yaml").warnings
    }

    @Test("A rule after a catch-all is unreachable: both places are named")
    func afterACatchAll() throws {
        let warnings = try Self.warnings("""
            endpoint: POST /login
            rules:
              - name: unknownUser
                respond: { status: 404 }
              - name: locked
                when: { body: { email: locked@x.com } }
                respond: { status: 423 }
            """)
        #expect(warnings.count == 1, "\(warnings)")
        let warning = try #require(warnings.first)
        #expect((warning.file, warning.line, warning.column) == ("inline.yaml", 5, 5))
        #expect(warning.message.hasPrefix("warning: rule 'locked' of POST /login can never answer: rule 'unknownUser' above it (inline.yaml:3:5)"),
                "\(warning.message)")
        #expect(warning.message.contains("X-Mishap-Rule: locked"))
    }

    @Test("A rule below one with the same when that always answers is unreachable")
    func belowTheSameWhen() throws {
        let warnings = try Self.warnings("""
            endpoint: GET /a
            rules:
              - name: first
                when: { query: { user: bob } }
                respond: { status: 500 }
              - name: second
                when: { query: { user: bob } }
                respond: { status: 503 }
              - name: rest
                respond: { status: 200 }
            """)
        #expect(warnings.map(\.line) == [6], "\(warnings)")
        #expect(warnings.first?.message.contains("has the same 'when'") == true)
    }

    @Test("A when of several alternatives shadows only the same alternatives, in the same order")
    func alternativesShadowOnlyTheSameList() throws {
        let warnings = try Self.warnings("""
            endpoint: GET /a
            rules:
              - name: either
                when: [{ query: { user: bob } }, { query: { user: ann, role: admin } }]
                respond: { status: 500 }
              - name: bobOnly
                when: { query: { user: bob } }
                respond: { status: 501 }
              - name: swapped
                when: [{ query: { user: ann, role: admin } }, { query: { user: bob } }]
                respond: { status: 502 }
              - name: again
                when: [{ query: { user: bob } }, { query: { user: ann, role: admin } }]
                respond: { status: 503 }
              - name: rest
                respond: { status: 200 }
            """)
        #expect(warnings.map(\.line) == [12], "\(warnings)")
        #expect(warnings.first?.message.contains("rule 'again' of GET /a can never answer: rule 'either' above it") == true,
                "\(warnings)")
    }

    @Test("Rules that can still be reached get no warning: after chance, a passing cycle, another when")
    func reachableRules() throws {
        let warnings = try Self.warnings("""
            endpoint: GET /a
            rules:
              - name: sometimes
                chance: 0.5
                respond: { status: 500 }
              - name: twice
                cycle: [{ status: 503 }, pass]
              - name: bob
                when: { query: { user: bob } }
                respond: { status: 401 }
              - name: bobAgain
                when: { query: { user: bob }, headers: { X-Admin: "1" } }
                respond: { status: 403 }
              - name: rest
                respond: { status: 200 }
            """)
        #expect(warnings.isEmpty, "\(warnings)")
    }

    @Test("The default scenarios have no warnings")
    func defaultsAreClean() throws {
        let set = try ScenarioLoader.load(directory: defaultScenariosDirectory)
        #expect(set.warnings.isEmpty, "\(set.warnings)")
    }
}
