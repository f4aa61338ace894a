import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// `aliases:` gives a rule more names for `X-Mishap-Rule`; names and aliases are unique per
/// endpoint in any case, since forcing compares them in any case.
@Suite struct RuleAliasTests {
    @Test("aliases: one name or a list, kept on the rule")
    func aliasesLoad() throws {
        let set = try ScenarioLoader.load(yaml: """
            endpoint: GET /x
            rules:
              - name: maintenanceForever
                aliases: "maintenance!"
                respond: { status: 500 }
              - name: illegalName
                aliases: [admin, superuser]
                respond: { status: 400 }
            """, name: "inline.yaml")
        let rules = try #require(set.endpoints.first).rules
        #expect(rules.map(\.aliases) == [["maintenance!"], ["admin", "superuser"]])
        #expect(rules[0].isNamed("MAINTENANCE!") && rules[0].isNamed("maintenanceforever") && !rules[0].isNamed("maintenance"))
        #expect(rules[1].isNamed("Admin") && rules[1].isNamed("superUser") && rules[1].isNamed("ILLEGALNAME"))
    }

    @Test("A name that differs from another only in case is a located duplicate")
    func namesDifferingInCase() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: serverError
                respond: { status: 500 }
              - name: servererror
                respond: { status: 501 }
            """, line: 5, column: 11,
            containing: ["duplicate rule name 'servererror'", "in any case", "(first at inline.yaml:3:11)"])
    }

    @Test("An alias that repeats a name, or another alias, is a located duplicate")
    func aliasRepeatingAName() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: empty
                respond: { status: 200 }
              - name: emptyUserName
                aliases: [blank, Empty]
                respond: { status: 400 }
            """, line: 6, column: 22,
            containing: ["duplicate alias 'Empty'", "(first at inline.yaml:3:11)"])
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                aliases: [one, two]
                respond: { status: 200 }
              - name: b
                aliases: two
                respond: { status: 400 }
            """, line: 7, column: 14,
            containing: ["duplicate alias 'two'", "(first at inline.yaml:4:20)"])
    }

    @Test("An empty alias, or one that is not a name, is located")
    func invalidAliases() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                aliases: ["", b]
                respond: { status: 200 }
            """, line: 4, column: 15, containing: ["an alias must not be empty"])
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                aliases: { b: c }
                respond: { status: 200 }
            """, line: 4, column: 14, containing: ["'aliases' (a name or a list of names)"])
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                aliasses: [b]
                respond: { status: 200 }
            """, line: 4, column: 5, containing: ["unknown key 'aliasses'", "did you mean 'aliases'"])
    }
}
