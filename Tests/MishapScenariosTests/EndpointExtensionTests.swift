import Foundation
import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// `extends:` adds rules to an endpoint declared in another file: at the top, or above a named
/// rule; the result does not depend on which file is read first, and mistakes are located.
@Suite struct EndpointExtensionTests {
    static let shipped = """
        endpoint: POST /login
        rules:
          - name: success
            when: { body: { email: john@doe.com } }
            respond: { status: 200 }
          - name: unknownUser
            respond: { status: 404 }
        """

    static func load(_ files: [String: String]) throws -> ScenarioSet {
        let folder = try TemporaryFolder()
        for (name, text) in files { _ = try folder.write(name, text) }
        return try withExtendedLifetime(folder) { try ScenarioLoader.load(directory: folder.path) }
    }

    static func ruleNames(_ set: ScenarioSet) -> [String] {
        set.endpoints.first { $0.name == "POST /login" }?.rules.map(\.name) ?? []
    }

    @Test("Rules go at the top by default, or above the rule named by before:")
    func placement() throws {
        let top = try Self.load(["login.yaml": Self.shipped, "mine.yaml": """
            extends: POST /login
            rules:
              - name: locked
                when: { body: { email: locked@x.com } }
                respond: { status: 423 }
            """])
        #expect(Self.ruleNames(top) == ["locked", "success", "unknownUser"])
        #expect(top.endpoints.count == 1 && top.warnings.isEmpty)
        let located = try #require(top.endpoints.first?.rules.first?.location)
        #expect(located.file.hasSuffix("mine.yaml") && located.line == 3)

        let before = try Self.load(["login.yaml": Self.shipped, "mine.yaml": """
            endpoints:
              - extends: POST /login
                before: unknownUser
                rules:
                  - { name: locked, when: { body: { email: locked@x.com } }, respond: { status: 423 } }
                  - { name: banned, when: { body: { email: banned@x.com } }, respond: { status: 403 } }
            """])
        #expect(Self.ruleNames(before) == ["success", "locked", "banned", "unknownUser"])
    }

    @Test("The result is the same whichever file is read first; several files add in path order")
    func orderIndependence() throws {
        let mine = """
            extends: POST /login
            rules:
              - { name: a, when: { body: { email: a@x.com } }, respond: { status: 401 } }
            """
        let theirs = """
            extends: POST /login
            rules:
              - { name: b, when: { body: { email: b@x.com } }, respond: { status: 402 } }
            """
        // The extending files sort before and after the declaring one.
        let first = try Self.load(["a-mine.yaml": mine, "m-login.yaml": Self.shipped, "z-theirs.yaml": theirs])
        let second = try Self.load(["0-login.yaml": Self.shipped, "a-mine.yaml": mine, "z-theirs.yaml": theirs])
        #expect(Self.ruleNames(first) == ["a", "b", "success", "unknownUser"])
        #expect(Self.ruleNames(second) == Self.ruleNames(first))
    }

    @Test("Mistakes are located in the extending file")
    func mistakes() throws {
        func problems(_ mine: String) -> [ScenarioDiagnostic] {
            do {
                _ = try Self.load(["login.yaml": Self.shipped, "mine.yaml": mine])
                Issue.record("loaded")
                return []
            } catch let error as ScenarioError {
                return error.diagnostics
            } catch {
                Issue.record("\(error)")
                return []
            }
        }
        let missing = problems("extends: POST /logn\nrules:\n  - { name: x, respond: { status: 500 } }\n")
        #expect(missing.count == 1 && missing[0].file.hasSuffix("mine.yaml") && missing[0].line == 1 && missing[0].column == 10, "\(missing)")
        #expect(missing.first?.message.contains("no endpoint 'POST /logn' is declared (did you mean 'POST /login'?)") == true, "\(missing)")
        let before = problems("extends: POST /login\nbefore: sucess\nrules:\n  - { name: x, respond: { status: 500 } }\n")
        #expect(before.count == 1 && before[0].line == 2 && before[0].message.contains("has no rule 'sucess' (did you mean 'success'?)"), "\(before)")
        let clash = problems("extends: POST /login\nrules:\n  - { name: Success, respond: { status: 500 } }\n")
        #expect(clash.count == 1 && clash[0].line == 3 && clash[0].message.contains("already has a rule named 'Success'"), "\(clash)")
        let both = problems("extends: POST /login\nendpoint: POST /login\nrules:\n  - { name: x, respond: { status: 500 } }\n")
        #expect(both.count == 1 && both[0].message.contains("not both"), "\(both)")
        let stray = problems("endpoint: GET /other\nbefore: x\nrules:\n  - { name: x, respond: { status: 500 } }\n")
        #expect(stray.count == 1 && stray[0].line == 2 && stray[0].message.contains("'before:' places rules added with 'extends:'"), "\(stray)")
    }

    @Test("An added rule after the endpoint's catch-all would never answer: placed first, it does")
    func extensionsAreCheckedForReachability() throws {
        let late = try Self.load(["login.yaml": Self.shipped, "mine.yaml": """
            extends: POST /login
            before: unknownUser
            rules:
              - { name: locked, when: { body: { email: locked@x.com } }, respond: { status: 423 } }
              - { name: again, when: { body: { email: locked@x.com } }, respond: { status: 424 } }
            """])
        #expect(late.warnings.map(\.line) == [5], "\(late.warnings)")
    }
}
