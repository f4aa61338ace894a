import MishapEngine
import MishapScenarios
import Testing

/// A large description generated here: hundreds of operations sharing deep chains of `$ref`s
/// through `allOf` and `oneOf` with nullable members; each shared schema is compiled once, and
/// the deepest member is still checked. A chain past the reference limit is refused, located.
@Suite struct OpenAPILargeDescriptionTests {
    /// `operations` paths, each posting a `Level0`, which holds a `Level1`... down to `Level<depth>`.
    static func description(operations: Int, depth: Int) -> String {
        var text = "openapi: 3.0.3\ninfo: { title: Large, version: \"1\" }\npaths:\n"
        for index in 0..<operations {
            text += """
                  /things\(index)/{id}:
                    post:
                      parameters: [{ name: id, in: path, required: true, schema: { type: integer } }]
                      requestBody:
                        required: true
                        content: { application/json: { schema: { $ref: "#/components/schemas/Level0" } } }

                """
        }
        text += "components:\n  schemas:\n"
        for level in 0..<depth {
            text += """
                    Level\(level):
                      allOf:
                        - { $ref: "#/components/schemas/Named" }
                        - type: object
                          properties:
                            next: { $ref: "#/components/schemas/Level\(level + 1)" }
                            note: { type: string, nullable: true }

                """
        }
        text += """
                Level\(depth):
                  oneOf:
                    - { type: integer }
                    - { type: string, format: date }
                Named: { type: object, required: [name], properties: { name: { type: string } } }

            """
        return text
    }

    /// The JSON body nesting `next` `levels` deep, with `leaf` at the bottom.
    static func body(levels: Int, leaf: String) -> String {
        var text = leaf
        for _ in 0..<levels { text = #"{"name":"n","note":null,"next":\#(text)}"# }
        return text
    }

    @Test func manyOperationsAndDeepReferencesAreCompiledAndChecked() throws {
        let depth = 40
        let loaded = try OpenAPILoader.load(text: Self.description(operations: 500, depth: depth), name: "large.yaml")
        #expect(loaded.contract.operationCount == 500)
        #expect(loaded.warnings.isEmpty)
        func problems(_ path: String, _ json: String) -> [String]? {
            loaded.contract.problems(for: Request(method: "POST", path: path, body: Array(json.utf8)))?.problems.list
        }
        #expect(problems("/things499/7", Self.body(levels: depth, leaf: #""2024-01-31""#)) == [])
        #expect(problems("/things0/7", Self.body(levels: depth, leaf: "12")) == [])
        let deepest = "/" + Array(repeating: "next", count: depth).joined(separator: "/")
        #expect(problems("/things250/x", Self.body(levels: depth, leaf: "true")) == [
            #"path id: expected an integer, got "x""#,
            "\(deepest): matches none of the 2 schemas of oneOf (the first says: \(deepest): expected an integer, got true)",
        ])
        #expect(problems("/things500/1", "{}") == nil)
    }

    @Test func aChainPastTheReferenceLimitIsRefused() {
        #expect {
            _ = try OpenAPILoader.load(text: Self.description(operations: 1, depth: 70), name: "deep.yaml")
        } throws: { error in
            (error as? ScenarioError)?.diagnostics.first?.message.hasSuffix("is more than 64 references deep") == true
        }
    }
}
