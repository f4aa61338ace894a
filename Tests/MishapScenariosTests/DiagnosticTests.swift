import Foundation
import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

@Suite("Located scenario errors")
struct DiagnosticTests {
    // MARK: Unknown keys

    @Test("An unknown key in a response is located, with a suggestion")
    func unknownKeyWithSuggestion() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond:
                  stauts: 500
            """, line: 5, column: 7,
            containing: ["unknown key 'stauts' in a response", "(did you mean 'status'?)", "expected one of 'status'"])
    }

    @Test("An unknown key with nothing close gets no suggestion")
    func unknownKeyWithoutSuggestion() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond: { status: 200, colour: red }
            """, line: 4, column: 29, containing: ["unknown key 'colour' in a response"], notContaining: ["did you mean"])
    }

    @Test("A misspelt top-level key is reported along with what is then missing")
    func unknownTopLevelKey() throws {
        let found = diagnostics(ofYAML: """
            endpoint: GET /x
            rulez:
              - name: a
                respond: { status: 200 }
            """)
        try #require(found.count == 2, "\(found)")
        expect(found[0], file: "inline.yaml", line: 1, column: 1, containing: ["endpoint has no 'rules:'"])
        expect(found[1], file: "inline.yaml", line: 2, column: 1,
               containing: ["unknown key 'rulez' in a scenario file", "(did you mean 'rules'?)"])
    }

    @Test("An unknown key in a condition suggests the condition")
    func unknownConditionKey() throws {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                when: { query: { q: { prefx: "a", maxLength: 9 } } }
                respond: { status: 200 }
            """, line: 4, column: 27, containing: ["unknown key 'prefx' in a condition", "(did you mean 'prefix'?)"])
        // Alone, the misspelt key also leaves the condition empty: both are said.
        let found = diagnostics(ofYAML: """
            endpoint: GET /x
            rules:
              - name: a
                when: { query: { q: { prefx: "a" } } }
                respond: { status: 200 }
            """)
        // Only the misspelt key: the condition is not also called empty.
        try #require(found.count == 1, "\(found)")
        expect(found[0], file: "inline.yaml", line: 4, column: 27, containing: ["unknown key 'prefx' in a condition"])
    }

    // MARK: Wrong types

    @Test("A status that is not a number")
    func statusNotANumber() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond:
                  status: "abc"
            """, line: 5, column: 15, containing: ["'status' must be a whole number"])
    }

    @Test("'rules' that is not a list")
    func rulesNotAList() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules: 5
            """, line: 2, column: 8, containing: ["'rules' must be a list"])
    }

    @Test("'query' that is a list instead of a mapping")
    func queryNotAMapping() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                when:
                  query: [1]
                respond: { status: 200 }
            """, line: 5, column: 14, containing: ["'query' must be a mapping of names to values"])
    }

    @Test("Other wrong types: a boolean, a length, a rule, headers")
    func otherWrongTypes() {
        expectSingleDiagnostic("""
            endpoint: POST /x
            rules:
              - name: a
                when: { malformedBody: maybe }
                respond: { status: 400 }
            """, line: 4, column: 28, containing: ["'malformedBody' must be true or false"])
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                when: { query: { q: { maxLength: many } } }
                respond: { status: 400 }
            """, line: 4, column: 38, containing: ["'maxLength' must be a whole number"])
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                when: { query: { q: { minLength: -1 } } }
                respond: { status: 400 }
            """, line: 4, column: 38, containing: ["'minLength' must not be negative"])
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - just a string
            """, line: 3, column: 5, containing: ["a rule must be a mapping"])
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond: { headers: [X-One] }
            """, line: 4, column: 25, containing: ["'headers' must be a mapping of names to values"])
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: [a, b]
                respond: {}
            """, line: 3, column: 11, containing: ["'name' must be a single value, not a list"])
    }

    // MARK: Conditions

    /// A one-rule endpoint `GET /x` whose rule has the condition `q: VALUE` on the query, written
    /// in block style (VALUE at line 6, column 12).
    static func queryCondition(_ value: String) -> String {
        "endpoint: GET /x\nrules:\n  - name: a\n    when:\n      query:\n        q: \(value)\n    respond: { status: 200 }\n"
    }

    @Test("A regular expression that does not compile")
    func badRegex() {
        expectSingleDiagnostic(Self.queryCondition(#"{ matches: "a(" }"#), line: 6, column: 23,
                               containing: ["invalid regular expression 'a('"])
    }

    @Test("A null condition value matches nothing and is an error")
    func nullCondition() {
        expectSingleDiagnostic(Self.queryCondition("null"), line: 6, column: 12,
                               containing: ["an empty value matches nothing", "absent: true"])
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                when: { headers: { X-Token: ~ } }
                respond: { status: 200 }
            """, line: 4, column: 33, containing: ["an empty value matches nothing"])
    }

    @Test("A quoted \"null\" is a string, not a null condition")
    func quotedNullIsAString() throws {
        let set = try ScenarioLoader.load(yaml: """
            endpoint: GET /x
            rules:
              - name: literalNull
                when: { query: { q: "null" } }
                respond: { status: 201 }
              - name: other
                respond: { status: 200 }
            """)
        let engine = set.makeEngine()
        #expect(engine.respond(to: Request(method: "GET", path: "/x", query: [Field("q", "null")])).status == 201)
        #expect(engine.respond(to: Request(method: "GET", path: "/x")).status == 200)
    }

    @Test("An unknown path parameter, with a suggestion")
    func unknownPathParameter() {
        expectSingleDiagnostic("""
            endpoint: GET /users/{id}
            rules:
              - name: a
                when:
                  path:
                    idd: "7"
                respond: { status: 200 }
            """, line: 6, column: 9,
            containing: ["unknown path parameter 'idd'", "(did you mean 'id'?)", "the path's parameters are id"])
        expectSingleDiagnostic("""
            endpoint: GET /users
            rules:
              - name: a
                when: { path: { id: "7" } }
                respond: { status: 200 }
            """, line: 4, column: 21, containing: ["unknown path parameter 'id'", "the path has no {parameters}"])
    }

    @Test("'when' as an empty list")
    func emptyWhenList() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                when: []
                respond: { status: 200 }
            """, line: 4, column: 11, containing: ["'when' as a list needs at least one alternative"])
    }

    // MARK: Responses

    @Test("Status codes out of range: 99 and 600 (100 and 599 are fine)")
    func statusOutOfRange() throws {
        let found = diagnostics(ofYAML: """
            endpoint: GET /x
            rules:
              - name: low
                respond: { status: 99 }
              - name: high
                respond: { status: 600 }
            """)
        try #require(found.count == 2, "\(found)")
        expect(found[0], file: "inline.yaml", line: 4, column: 24,
               containing: ["'status' must be an HTTP status code from 100 to 599"])
        expect(found[1], file: "inline.yaml", line: 6, column: 24,
               containing: ["'status' must be an HTTP status code from 100 to 599"])

        let set = try ScenarioLoader.load(yaml: """
            endpoint: GET /x
            rules:
              - name: low
                when: { query: { q: low } }
                respond: { status: 100 }
              - name: high
                respond: { status: 599 }
            """)
        let engine = set.makeEngine()
        #expect(engine.respond(to: Request(method: "GET", path: "/x", query: [Field("q", "low")])).status == 100)
        #expect(engine.respond(to: Request(method: "GET", path: "/x")).status == 599)
    }

    @Test("Headers the server sets itself cannot be declared")
    func reservedHeaders() throws {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond:
                  headers:
                    Content-Length: "5"
            """, line: 6, column: 9, containing: ["'Content-Length' is set by the server and cannot be declared"])
        let found = diagnostics(ofYAML: """
            endpoint: GET /x
            rules:
              - name: a
                respond:
                  headers: { transfer-encoding: chunked, X-Fine: ok, Date: today, "Bad Name": x }
            """)
        try #require(found.count == 3, "\(found)")
        expect(found[0], file: "inline.yaml", line: 5, column: 18, containing: ["'transfer-encoding' is set by the server"])
        expect(found[1], file: "inline.yaml", line: 5, column: 58, containing: ["'Date' is set by the server"])
        expect(found[2], file: "inline.yaml", line: 5, column: 71, containing: ["'Bad Name' is not a valid header name"])
    }

    @Test("Two bodies in one response")
    func twoBodies() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond: { json: { a: 1 }, text: "a" }
            """, line: 4, column: 32, containing: ["'json' and 'text' cannot both be given"])
    }

    @Test("An unknown placeholder, with a suggestion, in text, header and JSON bodies")
    func unknownPlaceholder() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond:
                  text: "Hello {{qurey.x}}"
            """, line: 5, column: 13,
            containing: ["unknown placeholder '{{qurey.x}}'", "(did you mean 'query'?)"])
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond: { headers: { X-Echo: "{{heders.a}}" } }
            """, line: 4, column: 35,
            containing: ["unknown placeholder '{{heders.a}}'", "(did you mean 'headers'?)"])
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond:
                  json:
                    user:
                      name: "{{qurey.name}}"
            """, line: 7, column: 17,
            containing: ["unknown placeholder '{{qurey.name}}'", "(did you mean 'query'?)"])
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond: { text: "{{request.verb}}" }
            """, line: 4, column: 22,
            containing: ["unknown placeholder '{{request.verb}}'", "request.method"], notContaining: ["did you mean"])
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond: { text: "{{query.x" }
            """, line: 4, column: 22, containing: ["unclosed placeholder"])
        // A condition's value holding `{{` is a template too, found byte by byte as in a body.
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                when: { query: { y: "{{query.x" } }
                respond: { status: 200 }
            """, line: 4, column: 25, containing: ["unclosed placeholder"])
    }

    // MARK: Rules and cycles

    @Test("An empty cycle")
    func emptyCycle() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                cycle: []
            """, line: 4, column: 12, containing: ["'cycle' is empty"])
    }

    @Test("A cycle step that is neither a response nor 'pass'")
    func badCycleStep() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                cycle:
                  - { status: 500 }
                  - skip
            """, line: 6, column: 9, containing: ["a cycle step is a response or 'pass', not 'skip'"])
    }

    @Test("A rule with both respond and cycle")
    func respondAndCycle() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond: { status: 200 }
                cycle: [pass]
            """, line: 5, column: 5, containing: ["a rule has either 'respond:' or 'cycle:', not both"])
    }

    @Test("A rule with neither respond nor cycle")
    func neitherRespondNorCycle() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: lonely
                when: { query: { q: a } }
            """, line: 3, column: 5, containing: ["rule 'lonely' has neither 'respond:' nor 'cycle:'"])
    }

    @Test("A rule without a name")
    func missingName() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: fine
                respond: { status: 200 }
              - respond: { status: 201 }
            """, line: 5, column: 5, containing: ["rule has no 'name:'"])
    }

    @Test("A duplicate rule name points at the first one")
    func duplicateRuleName() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: same
                respond: { status: 200 }
              - name: other
                respond: { status: 200 }
              - name: same
                respond: { status: 201 }
            """, line: 7, column: 11,
            containing: ["duplicate rule name 'same'", "first at inline.yaml:3:11"])
    }

    @Test("Empty rules")
    func emptyRules() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules: []
            """, line: 2, column: 8, containing: ["'rules' is empty"])
    }

    // MARK: Endpoints

    @Test("An unknown method, with a suggestion")
    func unknownMethod() {
        expectSingleDiagnostic("""
            endpoint: GTE /x
            rules:
              - name: a
                respond: { status: 200 }
            """, line: 1, column: 11, containing: ["unknown method 'GTE'", "(did you mean 'GET'?)", "expected one of GET"])
    }

    @Test("An endpoint that is not a method and a path")
    func malformedEndpoint() {
        expectSingleDiagnostic("""
            endpoint: /x
            rules:
              - name: a
                respond: {}
            """, line: 1, column: 11, containing: ["'endpoint' must be a method and a path"])
        expectSingleDiagnostic("""
            endpoint: GET x/{y
            rules:
              - name: a
                respond: {}
            """, line: 1, column: 11, containing: ["'x/{y' is not a path"])
    }

    @Test("A missing 'endpoint:'")
    func missingEndpoint() {
        expectSingleDiagnostic("""
            rules:
              - name: a
                respond: {}
            """, line: 1, column: 1, containing: ["missing 'endpoint:'"])
    }

    @Test("The same endpoint twice in one file's 'endpoints:' list")
    func duplicateEndpointInOneFile() {
        expectSingleDiagnostic("""
            endpoints:
              - endpoint: GET /dup
                rules: [{ name: a, respond: {} }]
              - endpoint: get /dup
                rules: [{ name: b, respond: {} }]
            """, line: 4, column: 15,
            containing: ["endpoint 'GET /dup' is already declared at inline.yaml:2:15"])
    }

    @Test("The same endpoint in two files points at the first file")
    func duplicateEndpointAcrossFiles() throws {
        let folder = try TemporaryFolder()
        let yaml = """
            endpoint: GET /dup
            rules:
              - name: a
                respond: { status: 200 }
            """
        try folder.write("a.yaml", yaml)
        try folder.write("b.yaml", yaml)
        expectSingleDiagnostic(ofDirectory: folder.path, file: folder.path + "/b.yaml", line: 1, column: 11,
                               containing: ["endpoint 'GET /dup' is already declared at \(folder.path)/a.yaml:1:11"])
    }

    // MARK: YAML syntax

    @Test("A YAML syntax error is located where the parser stopped")
    func yamlSyntaxError() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a: b
                respond: {}
            """, line: 3, column: 12, containing: ["YAML syntax", "mapping values are not allowed"])
    }

    @Test("An unclosed flow mapping is a YAML syntax error on its line")
    func yamlUnclosedFlow() throws {
        let found = diagnostics(ofYAML: """
            endpoint: GET /x
            rules:
              - name: a
                respond: { status: 200
            """)
        try #require(found.count == 1, "\(found)")
        #expect(found.first?.message.hasPrefix("YAML syntax") == true, "\(found)")
        #expect((found.first?.line ?? 0) >= 4, "\(found)")
    }

    @Test("A duplicate key in one mapping")
    func yamlDuplicateKey() throws {
        let found = diagnostics(ofYAML: """
            endpoint: GET /x
            endpoint: GET /y
            rules:
              - name: a
                respond: {}
            """)
        try #require(found.count == 1, "\(found)")
        #expect(found.first?.message.contains("duplicate key 'endpoint'") == true, "\(found)")
    }

    // MARK: Body files

    /// A one-rule scenario whose answer is the body file `path`, written as `file: PATH` at line
    /// 5, column 13.
    static func bodyFileScenario(_ path: String) -> String {
        "endpoint: GET /x\nrules:\n  - name: a\n    respond:\n      file: \(path)\n"
    }

    /// A folder holding `outside.txt` and a `scenarios` folder: where a body file escapes to.
    struct Outside {
        let outer: TemporaryFolder
        /// The scenarios folder.
        let scenarios: String
        /// The file outside it.
        let file: String

        init() throws {
            outer = try TemporaryFolder()
            file = try outer.write("outside.txt", "secret")
            scenarios = try outer.makeFolder("scenarios")
        }

        /// Writes `scenarios/scenario.yaml`; its path.
        func scenario(_ yaml: String) throws -> String {
            try outer.write("scenarios/scenario.yaml", yaml)
        }
    }

    @Test("A missing body file")
    func missingBodyFile() throws {
        let folder = try TemporaryFolder()
        let scenario = try folder.write("scenario.yaml", Self.bodyFileScenario("nope.json"))
        expectSingleDiagnostic(ofDirectory: folder.path, file: scenario, line: 5, column: 13,
                               containing: ["body file 'nope.json' not found"])
    }

    @Test("A body file outside the scenarios folder, by '..'")
    func bodyFileEscapingByDotDot() throws {
        let outside = try Outside()
        let scenario = try outside.scenario(Self.bodyFileScenario("../outside.txt"))
        expectSingleDiagnostic(ofDirectory: outside.scenarios, file: scenario, line: 5, column: 13,
                               containing: ["body file '../outside.txt' is outside the scenarios folder"])
    }

    @Test("A body file outside the scenarios folder, through a symbolic link inside it")
    func bodyFileEscapingBySymlink() throws {
        let outside = try Outside()
        let outer = outside.outer
        try outer.symlink("scenarios/link.txt", to: outside.file)
        try outer.makeFolder("elsewhere")
        try outer.write("elsewhere/secret.json", "{}")
        // Under files/, so the folder is not walked for scenarios.
        try outer.makeFolder("scenarios/files")
        try outer.symlink("scenarios/files/linked-folder", to: outer.path + "/elsewhere")
        let scenario = try outside.scenario("""
            endpoint: GET /x
            rules:
              - name: a
                respond:
                  file: link.txt
              - name: b
                respond:
                  file: files/linked-folder/secret.json
            """)
        let found = diagnostics(ofDirectory: outside.scenarios)
        try #require(found.count == 2, "\(found)")
        expect(found[0], file: scenario, line: 5, column: 13, containing: ["body file 'link.txt' is outside the scenarios folder"])
        expect(found[1], file: scenario, line: 8, column: 13,
               containing: ["body file 'files/linked-folder/secret.json' is outside the scenarios folder"])
    }

    @Test("An absolute body file path outside the folder")
    func bodyFileAbsoluteOutside() throws {
        let outside = try Outside()
        let scenario = try outside.scenario("""
            endpoint: GET /x
            rules:
              - name: a
                respond: { file: "\(outside.file)" }
            """)
        expectSingleDiagnostic(ofDirectory: outside.scenarios, file: scenario, line: 4, column: 22,
                               containing: ["is outside the scenarios folder"])
    }

    @Test("A body file that is a folder")
    func bodyFileIsAFolder() throws {
        let folder = try TemporaryFolder()
        try folder.makeFolder("files/sub")
        try folder.write("scenario.yaml", """
            endpoint: GET /x
            rules:
              - name: a
                respond: { file: files/sub }
            """)
        expectSingleDiagnostic(ofDirectory: folder.path, file: folder.path + "/scenario.yaml", line: 4, column: 22,
                               containing: ["body file 'files/sub' cannot be read"])
    }

    @Test("A body file over 64 MiB, and a FIFO named as a body file, are refused without reading them")
    func bodyFileTooLargeOrNotRegular() throws {
        let folder = try TemporaryFolder()
        try folder.makeFolder("files")
        // Sparse: the size is there, the bytes are not.
        let big = open(folder.path + "/files/big.bin", O_WRONLY | O_CREAT, 0o644)
        try #require(big >= 0)
        #expect(ftruncate(big, off_t(64 * 1024 * 1024 + 1)) == 0)
        close(big)
        #expect(mkfifo(folder.path + "/files/pipe.json", 0o644) == 0)
        try folder.write("scenario.yaml", """
            endpoints:
              - endpoint: GET /big
                rules: [{ name: a, respond: { file: files/big.bin } }]
              - endpoint: GET /pipe
                rules: [{ name: b, respond: { file: files/pipe.json } }]
            """)
        let found = diagnostics(ofDirectory: folder.path)
        try #require(found.count == 2, "\(found)")
        expect(found[0], file: folder.path + "/scenario.yaml", line: 3, column: 41,
               containing: ["body file 'files/big.bin' is 67108865 bytes; a body file may be at most 64 MiB"])
        expect(found[1], file: folder.path + "/scenario.yaml", line: 5, column: 41,
               containing: ["body file 'files/pipe.json' cannot be read: not a regular file"])
    }

    // MARK: Several problems

    @Test("Every problem of one file is reported, in file order")
    func severalErrorsInOneFile() throws {
        let found = diagnostics(ofYAML: """
            endpoint: GET /x
            rules:
              - name: one
                respond: { stauts: 200 }
              - name: two
                when: { query: { q: { matches: "(" } } }
                respond: { status: 700 }
              - respond: { status: 200 }
              - name: four
                respond:
                  headers: { Date: today }
                  text: "{{qurey.q}}"
            """)
        try #require(found.count == 6, "\(found.map(\.description).joined(separator: "\n"))")
        #expect(found.allSatisfy { $0.file == "inline.yaml" })
        let sorted = found.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
        #expect(sorted.map(\.line) == [4, 6, 7, 8, 11, 12])
        #expect(sorted.map(\.column) == [16, 36, 24, 5, 18, 13])
        #expect(sorted[0].message.contains("unknown key 'stauts'"))
        #expect(sorted[1].message.contains("invalid regular expression '('"))
        #expect(sorted[2].message.contains("from 100 to 599"))
        #expect(sorted[3].message.contains("rule has no 'name:'"))
        #expect(sorted[4].message.contains("'Date' is set by the server"))
        #expect(sorted[5].message.contains("unknown placeholder '{{qurey.q}}'"))

        let error = ScenarioError(diagnostics: found)
        #expect(error.description.split(separator: "\n").count == 6)
    }

    @Test("Diagnostics come in file order, as ScenarioError documents")
    func diagnosticsInFileOrder() throws {
        // The response's body ('text', line 6) is compiled before its 'headers' (line 5); the
        // report still lists the header problem first.
        let found = diagnostics(ofYAML: """
            endpoint: GET /x
            rules:
              - name: a
                respond:
                  headers: { Date: today }
                  text: "{{qurey.q}}"
            """)
        try #require(found.count == 2, "\(found)")
        #expect(found.map(\.line) == [5, 6], "\(found)")
    }

    @Test("Problems in two files are all reported, per file")
    func errorsInTwoFiles() throws {
        let folder = try TemporaryFolder()
        try folder.write("a.yaml", """
            endpoint: GTE /a
            rules:
              - name: a
                respond: {}
            """)
        try folder.write("b.yaml", """
            endpoint: GET /b
            rules:
              - name: b
                respond: { status: 42 }
              - name: b2
                cycle: []
            """)
        try folder.write("c.yaml", """
            endpoint: GET /c
            rules:
              - name: fine
                respond: {}
            """)
        let found = diagnostics(ofDirectory: folder.path)
        try #require(found.count == 3, "\(found.map(\.description).joined(separator: "\n"))")
        expect(found[0], file: folder.path + "/a.yaml", line: 1, column: 11, containing: ["unknown method 'GTE'"])
        expect(found[1], file: folder.path + "/b.yaml", line: 4, column: 24, containing: ["from 100 to 599"])
        expect(found[2], file: folder.path + "/b.yaml", line: 6, column: 12, containing: ["'cycle' is empty"])
    }

    @Test("A YAML syntax error in one file does not hide problems in another")
    func syntaxErrorAndCompileErrorInTwoFiles() throws {
        let folder = try TemporaryFolder()
        try folder.write("a.yaml", "endpoint: GET /a\nrules: [\n")
        try folder.write("b.yaml", """
            endpoint: GET /b
            rules:
              - name: b
                respond: { status: 1000 }
            """)
        let found = diagnostics(ofDirectory: folder.path)
        try #require(found.count == 2, "\(found.map(\.description).joined(separator: "\n"))")
        #expect(found[0].file == folder.path + "/a.yaml")
        #expect(found[0].message.hasPrefix("YAML syntax"))
        expect(found[1], file: folder.path + "/b.yaml", line: 4, column: 24, containing: ["from 100 to 599"])
    }

    @Test("Columns count Unicode scalars, not bytes")
    func unicodeColumns() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond: { text: "é€😀", stauts: 1 }
            """, line: 4, column: 29, containing: ["unknown key 'stauts'"])
    }
}

/// Spaces inside the braces of a placeholder are not part of its name.
@Suite struct PlaceholderSpacingTests {
    @Test func spacesAroundANameAreIgnored() throws {
        let yaml = """
            endpoint: GET /x
            rules:
              - name: echo
                respond: { text: "[{{ query.a }}|{{query.a   }}|{{   query.a}}|{{query.a}}]", headers: { X-A: "{{  query.a  }}" } }
            """
        let engine = try ScenarioLoader.load(yaml: yaml).makeEngine()
        let plan = engine.respond(to: Request(method: "GET", path: "/x", query: [Field("a", "v w")]))
        #expect(plan.text == "[v w|v w|v w|v w]")
        #expect(plan.headers.first { $0.name == "X-A" }?.value == "v w")
    }
}

