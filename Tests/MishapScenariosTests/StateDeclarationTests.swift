import Foundation
import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// Mistakes with state, each one problem located at line:column: a name tested or set but
/// never declared, a value of the wrong type, a bad duration.
@Suite("State declarations")
struct StateDeclarationTests {
    static func scenario(state: String = "{ calls: 0, token: \"\", live: false }", rule: String) -> String {
        """
        state: \(state)
        endpoint: GET /x
        rules:
          - name: a
            \(rule)
            respond: { text: ok }
        """
    }

    @Test(arguments: [
        ("set: { cals: 1 }", 5, 12, "state value 'cals' is not declared (did you mean 'calls'?); declared: calls, live, token"),
        ("when: { state: { tokn: x } }", 5, 22, "state value 'tokn' is not declared (did you mean 'token'?)"),
        ("set: { token: \"{{state.tokens}}\" }", 5, 19, "state value 'tokens' is not declared"),
        ("set: { calls: many }", 5, 19, "'calls' is an integer; the value 'many' is not one"),
        ("set: { live: 1 }", 5, 18, "'live' is a boolean; the value '1' is not one"),
        ("set: { calls: \"{{query.n}}\" }", 5, 19, "'calls' is an integer; the value '{{query.n}}' is not one"),
        ("set: { live: { value: true, for: -5s } }", 5, 38, "'for' must not be negative"),
        ("set: { live: { value: true, for: soon } }", 5, 38, "'for' must be a duration in milliseconds"),
        ("set: { live: { value: true, for: 2d } }", 5, 38, "'for' must be a duration in milliseconds"),
        ("set: { live: { increment: 1 } }", 5, 31, "'increment' needs a whole-number state; 'live' is a boolean"),
        ("set: { calls: { value: 1, increment: 1 } }", 5, 31, "a change has 'value' or 'increment', not both"),
        ("set: { calls: { for: 1s } }", 5, 19, "the change of 'calls' needs 'value' or 'increment'"),
        ("when: { state: { calls: lots } }", 5, 29, "'calls' is an integer; 'lots' is not one"),
        ("when: { state: { live: yes } }", 5, 28, "'live' is a boolean; 'yes' is not one"),
        ("when: { state: { token: { lessThan: 3 } } }", 5, 29, "compare whole numbers; 'token' is a string"),
        ("when: { state: { token: { absent: true } } }", 5, 29, "a state value always has a value"),
        ("when: { query: { n: { atLeast: x } } }", 5, 36, "'atLeast' must be a whole number"),
    ])
    func mistakesInRules(rule: String, line: Int, column: Int, message: String) {
        expectSingleDiagnostic(Self.scenario(rule: rule), line: line, column: column, containing: [message])
    }

    @Test(arguments: [
        ("{ calls: }", 1, 17, "the initial value of 'calls' is missing"),
        ("{ calls: 1.5 }", 1, 17, "must be a string, a whole number or true/false"),
        ("{ calls: [1] }", 1, 17, "must be a string, a whole number or true/false, not a list"),
        ("{ 9lives: 1 }", 1, 10, "'9lives' cannot name a state value"),
        ("{ a.b: 1 }", 1, 10, "'a.b' cannot name a state value"),
        ("{ outage: { start: true, for: 1s } }", 1, 18, "needs 'initial:'"),
        ("{ outage: { initial: false, start: true } }", 1, 18, "'start' and 'for' go together"),
        ("{ outage: { initial: false, start: 3, for: 1s } }", 1, 43, "'outage' is a boolean; 'start' '3' is not one"),
        ("{ outage: { initial: false, strat: true } }", 1, 36, "unknown key 'strat'"),
        ("[calls]", 1, 8, "'state' (names and their initial values) must be a mapping"),
    ])
    func mistakesInDeclarations(state: String, line: Int, column: Int, message: String) {
        expectSingleDiagnostic(Self.scenario(state: state, rule: "chance: 1"), line: line, column: column, containing: [message])
    }

    @Test func aValueIsDeclaredOnceAcrossFiles() throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("a.yaml", "state: { token: \"\" }\n")
        _ = try folder.write("b.yaml", "state:\n  token: \"\"\nendpoint: GET /x\nrules:\n  - name: a\n    respond: { text: \"{{state.token}}\" }\n")
        let problems = diagnostics(ofDirectory: folder.path)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first.map { "\($0.file):\($0.line):\($0.column)" } == folder.path + "/b.yaml:2:3", "\(problems)")
        #expect(problems.first?.message.contains("state value 'token' is already declared at \(folder.path)/a.yaml:1:10") == true, "\(problems)")
    }

    @Test func aFileThatCannotBeReadDoesNotMakeItsStateUndeclaredElsewhere() throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("a.yaml", "state: { token: \"\" \n")
        _ = try folder.write("b.yaml", "endpoint: GET /x\nrules:\n  - name: a\n    respond: { text: \"{{state.token}}\" }\n")
        let problems = diagnostics(ofDirectory: folder.path)
        #expect(problems.count == 1, "only the YAML problem: \(problems)")
        #expect(problems.first?.file.hasSuffix("a.yaml") == true, "\(problems)")
    }

    @Test func aFileMayOnlyDeclareState() throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("a-state.yaml", "state:\n  outage: { initial: false, start: true, for: 1m }\n")
        _ = try folder.write("b.yaml", "endpoint: GET /x\nrules:\n  - name: down\n    when: { state: { outage: true } }\n    respond: { status: 503 }\n")
        let set = try ScenarioLoader.load(directory: folder.path)
        #expect(set.state?.declarations.map(\.name) == ["outage"])
        #expect(set.makeEngine().respond(to: Request(method: "GET", path: "/x")).status == 503)
    }
}

/// The scenario examples of the state and quota sections of docs/scenarios.md load, and do
/// what the text around them says.
@Suite("README state examples")
struct ReadmeStateExampleTests {
    /// The ```yaml blocks between the heading `from` and the next `## ` heading after `to`.
    static func yamlBlocks(from: String, to: String) throws -> [String] {
        let readme = try String(contentsOfFile: defaultScenariosDirectory + "/../docs/scenarios.md", encoding: .utf8)
        let start = try #require(readme.range(of: "\n## " + from))
        let end = try #require(readme.range(of: "\n## " + to, range: start.upperBound..<readme.endIndex))
        let section = readme[start.upperBound..<end.lowerBound]
        return section.components(separatedBy: "```yaml\n").dropFirst().map { String($0.components(separatedBy: "```")[0]) }
    }

    @Test func theExamplesLoadAndAnswer() throws {
        let blocks = try Self.yamlBlocks(from: "State across requests", to: "Your own failures for a shipped endpoint")
        try #require(blocks.count == 3, "\(blocks)")
        let clock = ManualClock()
        let options = EngineOptions(clock: clock.function)

        let token = try ScenarioLoader.load(yaml: blocks[0]).makeEngine(options: options)
        _ = try token.setState([("accessToken", "t", nil), ("accessTokenLive", true, nil)], session: nil).get()
        let me = Request(method: "GET", path: "/me", headers: [Field("Authorization", "Bearer t")])
        #expect((1...4).map { _ in token.respond(to: me).status } == [200, 200, 200, 404])

        let search = try ScenarioLoader.load(yaml: blocks[1]).makeEngine(options: options)
        #expect((1...6).map { _ in search.respond(to: Request(method: "GET", path: "/search")).status } == [200, 200, 200, 200, 200, 429])

        let outage = try ScenarioLoader.load(yaml: blocks[2]).makeEngine(options: options)
        let query = Request(method: "GET", path: "/search", query: [Field("q", "swift")])
        #expect(outage.respond(to: Request(method: "GET", path: "/search", query: [Field("q", "outage")])).status == 503)
        #expect(outage.respond(to: query).status == 503)
        clock.advance(30_000)
        #expect(outage.respond(to: query).status == 404, "the outage is over; the example has no other rule")
    }
}
