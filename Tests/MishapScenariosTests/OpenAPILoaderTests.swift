import Foundation
import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// Reading an OpenAPI description for request checking: 3.0 and 3.1, YAML and JSON, `$ref`s
/// within the file, and every problem located as `file:line:column`.
@Suite struct OpenAPILoaderTests {
    static let pets30 = """
        openapi: 3.0.3
        info: { title: Pets, version: "1" }
        servers: [{ url: "https://{host}/api/{version}", variables: { host: { default: x }, version: { default: v2 } } }]
        paths:
          /pets/{id}:
            parameters:
              - $ref: "#/components/parameters/Id"
            put:
              requestBody: { $ref: "#/components/requestBodies/Pet" }
              responses: { "200": { description: ok } }
        components:
          parameters:
            Id: { name: id, in: path, required: true, schema: { type: integer, minimum: 1 } }
          requestBodies:
            Pet:
              required: true
              content:
                application/json: { schema: { $ref: "#/components/schemas/Pet" } }
          schemas:
            Pet:
              type: object
              required: [id, name]
              properties:
                id: { type: integer, readOnly: true }
                name: { type: string }
                tag: { type: string, nullable: true }
                friend: { $ref: "#/components/schemas/Friend" }
            Friend:
              allOf:
                - { $ref: "#/components/schemas/Named" }
                - { type: object, properties: { since: { type: string, format: date } } }
            Named: { type: object, required: [name], properties: { name: { type: string } } }
        """

    static let pets31 = #"""
        {"openapi": "3.1.0", "info": {"title": "Pets", "version": "1"},
         "paths": {"/pets": {"post": {"requestBody": {"content": {"application/json": {"schema": {
           "type": "object", "required": ["name"],
           "properties": {"name": {"type": "string"}, "tag": {"type": ["string", "null"]},
                          "age": {"$ref": "#/components/schemas/Age", "exclusiveMaximum": 30}}}}}}}}},
         "components": {"schemas": {"Age": {"type": "integer", "exclusiveMinimum": 0}}}}
        """#

    private func problems(_ loaded: OpenAPILoader.Loaded, _ method: String, _ path: String, json: String) -> [String]? {
        let request = Request(method: method, path: path, headers: [Field("Content-Type", "application/json")], body: Array(json.utf8))
        return loaded.contract.problems(for: request)?.problems.list
    }

    private func error(_ text: String, name: String = "api.yaml") -> [String] {
        do {
            _ = try OpenAPILoader.load(text: text, name: name)
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func readsA30DescriptionWithReferences() throws {
        let loaded = try OpenAPILoader.load(text: Self.pets30, name: "pets.yaml")
        #expect(loaded.warnings.isEmpty)
        #expect(loaded.contract.basePath == "/api/v2")
        #expect(loaded.contract.operationCount == 1)
        #expect(problems(loaded, "PUT", "/api/v2/pets/3", json: #"{"name":"Rex","tag":null,"friend":{"name":"Kit","since":"2024-01-31"}}"#) == [])
        #expect(problems(loaded, "PUT", "/api/v2/pets/0", json: #"{"tag":1,"friend":{"since":"2024-01-32"}}"#) == [
            "path id: expected a number >= 1, got 0", "/name: required", "/tag: expected a string or null, got 1",
            "/friend/name: required", #"/friend/since: expected a string in format date, got "2024-01-32""#,
        ])
        #expect(problems(loaded, "PUT", "/pets/3", json: "{}") == nil)
    }

    @Test func readsA31DescriptionInJSON() throws {
        let loaded = try OpenAPILoader.load(text: Self.pets31, name: "pets.json")
        #expect(loaded.contract.basePath == "")
        #expect(problems(loaded, "POST", "/pets", json: #"{"name":"Rex","tag":null,"age":29}"#) == [])
        #expect(problems(loaded, "POST", "/pets", json: #"{"name":"Rex","age":0}"#) == ["/age: expected a number > 0, got 0"])
        #expect(problems(loaded, "POST", "/pets", json: #"{"name":"Rex","age":30}"#) == ["/age: expected a number < 30, got 30"])
    }

    /// Header parameters named Accept, Content-Type or Authorization are ignored, as OpenAPI says.
    @Test func headersTheSpecificationIgnoresAreNotChecked() throws {
        let loaded = try OpenAPILoader.load(text: """
            openapi: 3.0.0
            paths:
              /a:
                get:
                  parameters:
                    - { name: Authorization, in: header, required: true, schema: { type: string } }
                    - { name: X-Key, in: header, required: true, schema: { type: string } }
            """, name: "api.yaml")
        #expect(loaded.contract.problems(for: Request(method: "GET", path: "/a"))?.problems.list == ["header X-Key: required"])
    }

    @Test func keywordsNotCheckedAreWarnedOfWithTheirPlace() throws {
        let loaded = try OpenAPILoader.load(text: """
            openapi: 3.1.0
            paths:
              /a:
                post:
                  parameters: [{ name: s, in: cookie }]
                  requestBody:
                    content:
                      application/json:
                        schema: { type: object, patternProperties: {}, properties: { n: { type: array, contains: {}, format: float }, m: { contains: {} } } }
            """, name: "api.yaml")
        #expect(loaded.warnings.map(\.description) == [
            "api.yaml:5:35: warning: cookie parameters is not checked in requests (1 use)",
            "api.yaml:9:37: warning: patternProperties is not checked in requests (1 use)",
            "api.yaml:9:92: warning: contains is not checked in requests (2 uses)",
            "api.yaml:9:114: warning: format: float is not checked in requests (1 use)",
        ])
    }

    @Test func problemsAreLocated() {
        let body = { (schema: String) in
            "openapi: 3.0.0\npaths:\n  /a:\n    post:\n      requestBody:\n        content:\n          application/json:\n            schema: \(schema)\n"
        }
        #expect(error(body(##"{ $ref: "other.yaml#/Pet" }"##)) == [
            "api.yaml:8:29: $ref 'other.yaml#/Pet' is outside this file; only references within it (#/components/...) are read",
        ])
        #expect(error(body(##"{ $ref: "#/components/schemas/Missing" }"##)) == [
            "api.yaml:8:29: $ref '#/components/schemas/Missing' names nothing in this file (no 'components')",
        ])
        #expect(error(body(##"{ $ref: "#/components/schemas/A" }"##) + """
            components:
              schemas:
                A: { type: object, properties: { b: { $ref: "#/components/schemas/B" } } }
                B: { type: array, items: { $ref: "#/components/schemas/A" } }
            """) == [
            "api.yaml:12:38: $ref '#/components/schemas/A' is cyclic (#/components/schemas/A → #/components/schemas/B → "
                + "#/components/schemas/A); recursive schemas are not checked",
        ])
        #expect(error(body("{ type: strin }")) == [
            "api.yaml:8:29: unknown type 'strin'; the types are string, number, integer, boolean, object, array and null",
        ])
        #expect(error(body(#"{ type: string, pattern: "(a)\\1" }"#)).first?.hasPrefix("api.yaml:8:46: pattern '(a)\\1' cannot be used: unsupported: backreferences") == true)
        #expect(error(body("{ type: object, required: true }")) == ["api.yaml:8:47: required must be a list of property names"])
        #expect(error("swagger: \"2.0\"\npaths: {}\n") == [
            "api.yaml:1:10: this is a Swagger 2.0 description; only OpenAPI 3.0 and 3.1 are read (convert it first, for example with swagger2openapi)",
        ])
        #expect(error("openapi: 2.5.0\n") == ["api.yaml:1:10: openapi '2.5.0' is not read; only 3.0.x and 3.1.x are"])
        #expect(error("info: {}\n") == ["api.yaml:1:1: an API description needs an 'openapi' key (3.0.x or 3.1.x)"])
        #expect(error("openapi: 3.0.0\npaths:\n  /a: {get: [\n") == [
            "api.yaml:4:1: YAML syntax: did not find expected node content while parsing a flow node",
        ])
    }

    @Test func aFileOverTheLimitIsRefusedBeforeItIsRead() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("big.yaml", "openapi: 3.0.0\n" + String(repeating: "#", count: OpenAPILoader.maximumFileSize))
        #expect(throws: ScenarioError.self) { try OpenAPILoader.load(path: path) }
        do {
            _ = try OpenAPILoader.load(path: path)
        } catch {
            #expect(error.description == "\(path):1:1: the API description is \(OpenAPILoader.maximumFileSize + 15) bytes; an API description may be at most 16 MiB (16777216 bytes)")
        }
        #expect(throws: ScenarioError.self) { try OpenAPILoader.load(path: folder.path + "/missing.yaml") }
    }
}
