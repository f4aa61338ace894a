import Foundation
import MishapTestSupport
import Testing

/// `--openapi` on the command line: `serve` refuses to start and `validate` exits 1 on a
/// description it cannot read, each problem located; warnings for what is not checked fail
/// `validate --strict`; `serve --help` documents the option.
@Suite("mishap serve and validate --openapi", .onBlockingThreads)
struct RequestCheckingCommandTests {
    static let scenario = """
        endpoint: GET /pets
        rules:
          - name: pets
            respond: { json: [] }
        """

    /// Each bad description, with the start of its located problem.
    static let bad: [(name: String, text: String, problem: String)] = [
        ("broken.yaml", "openapi: 3.0.0\npaths:\n  /a: {get: [\n", "broken.yaml:4:1: YAML syntax: did not find expected node content"),
        ("swagger.json", #"{"swagger": "2.0", "paths": {}}"#, "swagger.json:1:13: this is a Swagger 2.0 description; only OpenAPI 3.0 and 3.1 are read"),
        ("external.yaml", "openapi: 3.1.0\npaths:\n  /a:\n    get:\n      parameters: [{ $ref: \"common.yaml#/P\" }]\n",
         "external.yaml:5:28: $ref 'common.yaml#/P' is outside this file"),
        ("cyclic.yaml", """
            openapi: 3.0.0
            paths:
              /a:
                post:
                  requestBody: { content: { application/json: { schema: { $ref: "#/components/schemas/Node" } } } }
            components:
              schemas:
                Node: { type: object, properties: { children: { type: array, items: { $ref: "#/components/schemas/Node" } } } }
            """, "cyclic.yaml:8:81: $ref '#/components/schemas/Node' is cyclic"),
    ]

    @Test("A description that cannot be read stops serve and fails validate, located")
    func badDescriptionsAreRefused() async throws {
        let folder = try TemporaryFolder()
        try folder.write("scenarios/pets.yaml", Self.scenario)
        for bad in Self.bad {
            try folder.write(bad.name, bad.text)
            let validate = try await runMishap(["validate", "scenarios", "--openapi", bad.name], currentDirectory: folder.path)
            #expect(validate.status == 1, "\(validate)")
            #expect(validate.standardError.hasPrefix(bad.problem), "\(validate.standardError)")
            #expect(validate.standardError.hasSuffix("\(bad.name): 1 problem(s)\n"), "\(validate.standardError)")
            let serve = try await runMishap(["serve", "--scenarios", "scenarios", "--port", "0", "--openapi", bad.name],
                                            currentDirectory: folder.path, timeout: .seconds(30))
            #expect(serve.status == 1, "\(serve)")
            #expect(serve.standardError.contains("mishap: " + bad.problem), "\(serve.standardError)")
            #expect(!serve.standardOutput.contains("listening"), "\(serve.standardOutput)")
        }
    }

    @Test("A 50 MB description is refused before it is read")
    func aHugeDescriptionIsRefused() async throws {
        let folder = try TemporaryFolder()
        try folder.write("scenarios/pets.yaml", Self.scenario)
        try folder.write("huge.yaml", "openapi: 3.0.0\n# " + String(repeating: "x", count: 50_000_000) + "\n")
        let serve = try await runMishap(["serve", "--scenarios", "scenarios", "--port", "0", "--openapi", "huge.yaml"],
                                        currentDirectory: folder.path, timeout: .seconds(30))
        #expect(serve.status == 1, "\(serve)")
        #expect(serve.standardError.contains(
            "huge.yaml:1:1: the API description is 50000018 bytes; an API description may be at most 16 MiB (16777216 bytes)"),
            "\(serve.standardError)")
    }

    @Test("Keywords not checked are warnings: validate passes, and fails with --strict")
    func uncheckedKeywordsAreWarnings() async throws {
        let folder = try TemporaryFolder()
        try folder.write("scenarios/pets.yaml", Self.scenario)
        try folder.write("api.yaml", """
            openapi: 3.1.0
            paths:
              /pets:
                get:
                  parameters: [{ name: page, in: query, schema: { type: array, contains: { type: integer } } }]
            """)
        let result = try await runMishap(["validate", "scenarios", "--openapi", "api.yaml"], currentDirectory: folder.path)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == "api.yaml: 1 operation(s) checked: valid with 1 warning(s)\nscenarios: 1 file(s), 1 endpoint(s), 1 rule(s): valid\n",
                "\(result.standardOutput)")
        #expect(result.standardError == "api.yaml:5:68: warning: contains is not checked in requests (1 use)\n", "\(result.standardError)")
        let strict = try await runMishap(["validate", "--strict", "scenarios", "--openapi", "api.yaml"], currentDirectory: folder.path)
        #expect(strict.status == 1, "\(strict)")
    }

    @Test("serve --help documents --openapi")
    func helpDocumentsTheOption() async throws {
        let help = try await runMishap(["serve", "--help"])
        #expect(help.standardOutput.contains("--openapi <file>"), "\(help.standardOutput)")
        #expect(help.standardOutput.contains("Check each request against this OpenAPI 3.0 or 3.1"), "\(help.standardOutput)")
    }
}
