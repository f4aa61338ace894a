import Foundation
import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

@Suite("Loading scenario folders")
struct ScenarioLoaderTests {
    static let userNameRules = SeedRules.userName
    static let loginRules = SeedRules.login

    @Test("The default scenarios folder loads its endpoints with their rules in order")
    func defaultScenarios() throws {
        let set = try ScenarioLoader.load(directory: defaultScenariosDirectory)
        #expect(set.endpoints.map(\.name) == ["GET /isUserNameAvailable", "POST /login", "GET /me", "GET /search", "POST /token"])
        #expect(set.files == ["isUserNameAvailable", "login", "me", "search", "token"].map { defaultScenariosDirectory + "/\($0).yaml" })
        #expect(set.state?.declarations.map(\.name) == ["searchOutage", "accessToken", "accessTokenLive", "meCalls",
                                                        "replacedToken", "refreshToken", "refreshFailure"])
        try #require(set.endpoints.count == 5)
        for (endpoint, file, seed) in [(set.endpoints[0], "isUserNameAvailable.yaml", Self.userNameRules),
                                       (set.endpoints[1], "login.yaml", Self.loginRules)] {
            let declared = try DeclaredScenario(path: defaultScenariosDirectory + "/" + file)
            let names = endpoint.rules.map(\.name)
            // Every rule of the file, in file order, none dropped.
            #expect(names == declared.ruleNames)
            #expect(names.filter(seed.contains) == seed, "the seed rules are out of order: \(names)")
            #expect(endpoint.source == "\(defaultScenariosDirectory)/\(file):\(declared.endpointLine)")
            #expect(endpoint.rules.first?.source == "\(defaultScenariosDirectory)/\(file):\(declared.firstRuleLine)")
        }
    }

    @Test("The default scenarios answer through the engine")
    func defaultScenariosAnswer() throws {
        let engine = try ScenarioLoader.load(directory: defaultScenariosDirectory).makeEngine()

        let short = engine.respond(to: Request(method: "GET", path: "/isUserNameAvailable", query: [Field("userName", "abc")]))
        #expect(short.status == 400)
        #expect(short.bookkeeping.rule == "tooShort")
        #expect(short.bookkeeping.endpoint == "GET /isUserNameAvailable")
        #expect(short.text == #"{"error":true,"reason":"Username is too short."}"#)

        let available = engine.respond(to: Request(method: "GET", path: "/isUserNameAvailable", query: [Field("userName", "zaphod")]))
        #expect(available.status == 200)
        #expect(available.text == #"{"isAvailable":true,"userName":"zaphod"}"#)
        #expect(available.header("Content-Type") == "application/json; charset=utf-8")

        let login = engine.respond(to: Request(
            method: "POST", path: "/login", headers: [Field("Content-Type", "application/json")],
            body: Array(#"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#.utf8)))
        #expect(login.status == 200)
        #expect(login.bookkeeping.rule == "success")
    }

    @Test("Files under files/ are bodies, not scenarios, and a response can send one")
    func bodyFolderIsNotLoaded() throws {
        let folder = try TemporaryFolder()
        try folder.write("scenario.yaml", """
            endpoint: GET /body
            rules:
              - name: fromFile
                respond: { status: 202, file: files/body.json }
            """)
        let body = Data(#"{"fromFile": true, "emoji": "😀"}"#.utf8 + [0x0A])
        try folder.write("files/body.json", body)
        // Would be an error if it were read as a scenario.
        try folder.write("files/not-a-scenario.yaml", "this: is: not: valid: yaml: [")
        try folder.write("files/deeper/also-not.json", "{")

        let set = try ScenarioLoader.load(directory: folder.path)
        #expect(set.files == [folder.path + "/scenario.yaml"])
        #expect(set.endpoints.map(\.name) == ["GET /body"])

        let plan = set.makeEngine().respond(to: Request(method: "GET", path: "/body"))
        #expect(plan.status == 202)
        #expect(plan.bookkeeping.rule == "fromFile")
        #expect(plan.header("Content-Type") == "application/json; charset=utf-8")
        #expect(plan.body == Array(body))
    }

    @Test("Body file content types follow the extension; contentType overrides")
    func bodyFileContentTypes() throws {
        let folder = try TemporaryFolder()
        try folder.write("scenario.yaml", """
            endpoints:
              - endpoint: GET /page
                rules:
                  - name: page
                    respond: { file: files/page.html }
              - endpoint: GET /blob
                rules:
                  - name: blob
                    respond: { file: files/blob }
              - endpoint: GET /typed
                rules:
                  - name: typed
                    respond: { file: files/page.html, contentType: "text/x-custom" }
            """)
        try folder.write("files/page.html", "<p>hi</p>")
        try folder.write("files/blob", Data([0, 1, 2, 255]))
        let engine = try ScenarioLoader.load(directory: folder.path).makeEngine()

        let page = engine.respond(to: Request(method: "GET", path: "/page"))
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.text == "<p>hi</p>")
        let blob = engine.respond(to: Request(method: "GET", path: "/blob"))
        #expect(blob.header("Content-Type") == "application/octet-stream")
        #expect(blob.body == [0, 1, 2, 255])
        let typed = engine.respond(to: Request(method: "GET", path: "/typed"))
        #expect(typed.header("Content-Type") == "text/x-custom")
    }

    @Test("A body file reached through a symbolic link that stays inside the folder is fine")
    func symlinkInsideFolder() throws {
        let folder = try TemporaryFolder()
        try folder.write("files/real.txt", "inside")
        try folder.symlink("files/alias.txt", to: folder.path + "/files/real.txt")
        try folder.write("scenario.yaml", """
            endpoint: GET /x
            rules:
              - name: a
                respond: { file: files/alias.txt }
            """)
        let plan = try ScenarioLoader.load(directory: folder.path).makeEngine().respond(to: Request(method: "GET", path: "/x"))
        #expect(plan.text == "inside")
        #expect(plan.header("Content-Type") == "text/plain; charset=utf-8")
    }

    @Test("Scenario files in other sub-folders load, in path order; .yml and .json count")
    func subfoldersAndExtensions() throws {
        let folder = try TemporaryFolder()
        try folder.write("b.yml", """
            endpoint: GET /b
            rules: [{ name: b, respond: { text: b } }]
            """)
        try folder.write("a/nested.yaml", """
            endpoint: GET /a
            rules: [{ name: a, respond: { text: a } }]
            """)
        try folder.write("c.json", #"{"endpoint": "GET /c", "rules": [{"name": "c", "respond": {"text": "c"}}]}"#)
        try folder.write("README.md", "not a scenario: [")
        try folder.write(".hidden.yaml", "not: [valid")
        let set = try ScenarioLoader.load(directory: folder.path)
        #expect(set.endpoints.map(\.name) == ["GET /a", "GET /b", "GET /c"])
        #expect(set.files == ["a/nested.yaml", "b.yml", "c.json"].map { folder.path + "/" + $0 })
    }

    @Test("A symbolic link from the scenarios folder back into itself does not load its files again")
    func symlinkLoopInFolder() throws {
        let folder = try TemporaryFolder()
        try folder.write("scenario.yaml", """
            endpoint: GET /x
            rules: [{ name: a, respond: {} }]
            """)
        try folder.symlink("loop", to: ".")
        // Each folder is read once, so loop/loop/... is not walked.
        do throws(ScenarioError) {
            let set = try ScenarioLoader.load(directory: folder.path)
            #expect(set.endpoints.map(\.name) == ["GET /x"])
            #expect(set.files == [folder.path + "/scenario.yaml"])
        } catch {
            Issue.record("\(error.diagnostics.count) problem(s), the last: \(error.diagnostics.last?.description ?? "")")
        }
    }

    @Test("A symbolic link to a folder or file outside the scenarios folder is reported, not read")
    func symlinkOutOfFolder() throws {
        let outside = try TemporaryFolder()
        try outside.write("elsewhere.yaml", """
            endpoint: GET /elsewhere
            rules: [{ name: a, respond: {} }]
            """)
        let folder = try TemporaryFolder()
        try folder.write("scenario.yaml", """
            endpoint: GET /x
            rules: [{ name: a, respond: {} }]
            """)
        try folder.symlink("shared", to: outside.path)
        try folder.symlink("linked.yaml", to: outside.path + "/elsewhere.yaml")
        do throws(ScenarioError) {
            _ = try ScenarioLoader.load(directory: folder.path)
            Issue.record("links out of the scenarios folder were accepted")
        } catch {
            let messages = error.diagnostics.map(\.description).sorted()
            #expect(messages == [
                folder.path + "/linked.yaml:1:1: links to a file outside the scenarios folder; not read",
                folder.path + "/shared:1:1: links to a folder outside the scenarios folder; not read",
            ])
        }
    }

    @Test("A JSON scenario file loads and answers")
    func jsonScenario() throws {
        let folder = try TemporaryFolder()
        try folder.write("api.json", """
            {
              "endpoint": "POST /things/{id}",
              "rules": [
                { "name": "gone", "when": { "path": { "id": "0" } }, "respond": { "status": 410 } },
                { "name": "made", "respond": { "status": 201, "headers": { "X-Id": "{{path.id}}" },
                                              "json": { "id": "{{path.id}}", "ok": true, "n": 1.5, "none": null } } }
              ]
            }
            """)
        let set = try ScenarioLoader.load(directory: folder.path)
        #expect(set.endpoints.map(\.name) == ["POST /things/{id}"])
        #expect(set.endpoints.first?.rules.map(\.name) == ["gone", "made"])
        let engine = set.makeEngine()
        let gone = engine.respond(to: Request(method: "POST", path: "/things/0"))
        #expect(gone.status == 410)
        let made = engine.respond(to: Request(method: "POST", path: "/things/42"))
        #expect(made.status == 201)
        #expect(made.header("X-Id") == "42")
        #expect(made.text == #"{"id":"42","ok":true,"n":1.5,"none":null}"#)
    }

    @Test("Problems in a JSON scenario file are located too")
    func jsonScenarioError() throws {
        let folder = try TemporaryFolder()
        try folder.write("api.json", """
            {
              "endpoint": "GET /j",
              "rules": [
                { "name": "a", "respond": { "status": 700 } }
              ]
            }
            """)
        expectSingleDiagnostic(ofDirectory: folder.path, file: folder.path + "/api.json", line: 4, column: 43,
                               containing: ["'status' must be an HTTP status code from 100 to 599"])
    }

    @Test("An empty folder is an error")
    func emptyFolder() throws {
        let folder = try TemporaryFolder()
        expectSingleDiagnostic(ofDirectory: folder.path, file: folder.path, line: 1, column: 1,
                               containing: ["no scenario files"])
    }

    @Test("A folder with only body files and other files is an error too")
    func folderWithoutScenarios() throws {
        let folder = try TemporaryFolder()
        try folder.write("files/body.json", "{}")
        try folder.write("notes.txt", "hello")
        expectSingleDiagnostic(ofDirectory: folder.path, file: folder.path, line: 1, column: 1,
                               containing: ["no scenario files"])
    }

    @Test("A folder that does not exist, or is a file, is an error")
    func missingFolder() throws {
        let folder = try TemporaryFolder()
        let missing = folder.path + "/nowhere"
        expectSingleDiagnostic(ofDirectory: missing, file: missing, line: 1, column: 1,
                               containing: ["not found"])

        let file = try folder.write("plain.yaml", "endpoint: GET /x\nrules: [{ name: a, respond: {} }]\n")
        expectSingleDiagnostic(ofDirectory: file, file: file, line: 1, column: 1,
                               containing: ["not a folder"])
    }

    @Test("Scenario text without a folder cannot name body files")
    func inlineFileBody() {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                respond: { file: body.json }
            """, line: 4, column: 22, containing: ["'file: body.json' needs a scenarios folder"])
    }
}
