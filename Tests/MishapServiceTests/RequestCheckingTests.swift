import Foundation
import MishapScenarios
import MishapService
import MishapTestSupport
import Testing

/// `--openapi`: requests an operation describes are checked over a real socket before the
/// rules, with a 3.0 description in YAML and a 3.1 one in JSON, each violation answered 400
/// with its problem named and noted in the journal and the unmatched requests.
@Suite(.onBlockingThreads) struct RequestCheckingTests {
    static let scenarios = """
        endpoints:
          - endpoint: POST /v1/pets
            rules:
              - name: created
                respond: { status: 201, json: { created: true } }
          - endpoint: GET /v1/pets/{id}
            rules:
              - name: pet
                respond: { json: { id: 1 } }
          - endpoint: GET /v1/other
            rules:
              - name: other
                respond: { text: other }
        """

    /// A Petstore-like description in OpenAPI 3.0, YAML.
    static let pets30 = """
        openapi: 3.0.3
        info: { title: Pets, version: "1" }
        servers: [{ url: "http://localhost:8080/v1" }]
        paths:
          /pets:
            post:
              parameters:
                - { name: dryRun, in: query, schema: { type: boolean } }
              requestBody:
                required: true
                content: { application/json: { schema: { $ref: "#/components/schemas/NewPet" } } }
              responses: { "201": { description: created } }
          /pets/{id}:
            get:
              parameters:
                - { name: id, in: path, required: true, schema: { type: integer, minimum: 1 } }
                - { name: X-Request-Id, in: header, required: true, schema: { type: string, format: uuid } }
              responses: { "200": { description: ok } }
        components:
          schemas:
            NewPet:
              type: object
              required: [name, email, kind]
              additionalProperties: false
              properties:
                name: { type: string, minLength: 1 }
                email: { type: string, format: email }
                kind: { type: string, enum: [cat, dog] }
                tag: { type: string, nullable: true }
        """

    /// The same API in OpenAPI 3.1, JSON.
    static let pets31 = #"""
        {"openapi": "3.1.0", "info": {"title": "Pets", "version": "1"}, "servers": [{"url": "/v1"}],
         "paths": {
           "/pets": {"post": {
             "parameters": [{"name": "dryRun", "in": "query", "schema": {"type": "boolean"}}],
             "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}}},
             "responses": {"201": {"description": "created"}}}},
           "/pets/{id}": {"get": {
             "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1}},
                            {"name": "X-Request-Id", "in": "header", "required": true, "schema": {"type": "string", "format": "uuid"}}],
             "responses": {"200": {"description": "ok"}}}}},
         "components": {"schemas": {"NewPet": {
           "type": "object", "required": ["name", "email", "kind"], "additionalProperties": false,
           "properties": {"name": {"type": "string", "minLength": 1}, "email": {"type": "string", "format": "email"},
                          "kind": {"enum": ["cat", "dog"]}, "tag": {"type": ["string", "null"]}}}}}}
        """#

    static let descriptions = [("pets30.yaml", pets30), ("pets31.json", pets31)]

    private func serve(_ name: String, _ text: String, folder: TemporaryFolder) throws -> TestServer {
        var options = ServiceOptions()
        options.openAPI = try folder.write(name, text)
        return try TestServer(yaml: Self.scenarios, options: options)
    }

    private func post(_ harness: TestServer, _ json: String, query: String = "", type: String = "application/json") async throws -> ClientResponse {
        try await harness.send("POST", "/v1/pets" + query, body: Data(json.utf8), headers: ["Content-Type": type])
    }

    /// The problems a 400 lists, after checking it is Mishap's error body.
    private func problems(_ response: ClientResponse, sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        #expect(response.status == 400, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8", sourceLocation: sourceLocation)
        #expect(response.json?["error"] as? Bool == true, sourceLocation: sourceLocation)
        #expect((response.json?["reason"] as? String)?.contains("does not match the API description") == true, sourceLocation: sourceLocation)
        return response.json?["problems"] as? [String] ?? []
    }

    static let uuid = "123e4567-e89b-12d3-a456-426614174000"

    @Test(arguments: descriptions) func validRequestsGoOnToTheRules(_ description: (String, String)) async throws {
        let folder = try TemporaryFolder()
        let harness = try serve(description.0, description.1, folder: folder)
        let created = try await post(harness, #"{"name":"Rex","email":"rex@example.com","kind":"dog","tag":null}"#, query: "?dryRun=true")
        #expect(created.status == 201)
        #expect(created.text == #"{"created":true}"#)
        let pet = try await harness.send("GET", "/v1/pets/7", headers: ["X-Request-Id": Self.uuid])
        #expect(pet.status == 200)
        // No operation describes it: the rules answer, whatever it carries.
        #expect(try await harness.send("GET", "/v1/other?anything=1").text == "other")
        #expect(try await harness.send("GET", "/pets/7").status == 404)
    }

    @Test(arguments: descriptions) func eachViolationGetsItsProblemNamed(_ description: (String, String)) async throws {
        let folder = try TemporaryFolder()
        let harness = try serve(description.0, description.1, folder: folder)
        #expect(problems(try await post(harness, #"{"name":"Rex","email":42,"kind":"dog"}"#))
                == ["/email: expected a string in format email, got 42"])
        #expect(problems(try await post(harness, #"{"name":"Rex","email":"rex@","kind":"dog"}"#))
                == [#"/email: expected a string in format email, got "rex@""#])
        #expect(problems(try await post(harness, #"{"name":"","email":"a@b.c","kind":"bird","extra":1}"#)) == [
            "/name: expected at least 1 character(s), got 0", #"/kind: expected one of "cat", "dog", got "bird""#,
            "/extra: not allowed (additionalProperties is false)",
        ])
        #expect(problems(try await post(harness, #"{"name":"Rex","tag":5}"#)) == [
            "/email: required", "/kind: required", "/tag: expected a string or null, got 5",
        ])
        #expect(problems(try await post(harness, "[]")) == ["body: expected an object, got []"])
        #expect(problems(try await post(harness, "{")) == ["body: not valid JSON"])
        #expect(problems(try await post(harness, "")) == ["body: required"])
        #expect(problems(try await post(harness, "name=Rex", type: "application/x-www-form-urlencoded"))
                == ["body: Content-Type application/x-www-form-urlencoded is not one the operation accepts (application/json)"])
        #expect(problems(try await post(harness, #"{"name":"Rex","email":"a@b.c","kind":"cat"}"#, query: "?dryRun=maybe"))
                == [#"query dryRun: expected a boolean, got "maybe""#])
        #expect(problems(try await harness.send("GET", "/v1/pets/abc", headers: ["X-Request-Id": Self.uuid]))
                == [#"path id: expected an integer, got "abc""#])
        #expect(problems(try await harness.send("GET", "/v1/pets/0")) == ["path id: expected a number >= 1, got 0", "header X-Request-Id: required"])
        #expect(problems(try await harness.send("GET", "/v1/pets/3", headers: ["X-Request-Id": "nope"]))
                == [#"header X-Request-Id: expected a string in format uuid, got "nope""#])
    }

    /// A refused request is in the journal and the unmatched requests with its problems; a
    /// valid one is journaled as before, without them.
    @Test func refusalsAreJournaledAndListedAsUnmatched() async throws {
        let folder = try TemporaryFolder()
        let harness = try serve("pets.yaml", Self.pets30, folder: folder)
        _ = try await post(harness, #"{"name":"Rex","email":"rex@example.com","kind":"dog"}"#)
        _ = try await post(harness, #"{"name":"Rex","email":42,"kind":"dog"}"#)
        let entries = try await harness.journal()
        #expect(entries.count == 2)
        #expect(entries.first?["contractProblems"] == nil)
        #expect(entries.first?["rule"] as? String == "created")
        #expect(entries.last?["status"] as? Int == 400)
        #expect(entries.last?["rule"] is NSNull)
        #expect(entries.last?["contractProblems"] as? [String] == ["/email: expected a string in format email, got 42"])
        let unmatched = try #require(try await harness.admin("unmatched")["unmatched"] as? [[String: Any]])
        #expect(unmatched.count == 1)
        #expect(unmatched.first?["path"] as? String == "/v1/pets")
        #expect(unmatched.first?["id"] as? Int == entries.last?["id"] as? Int)
        #expect(unmatched.first?["contractProblems"] as? [String] == ["/email: expected a string in format email, got 42"])
        #expect((unmatched.first?["nearMisses"] as? [Any])?.isEmpty == true)
    }

    /// Without a description the same request reaches the rules; with one, a reload reads it
    /// again, and a broken one is refused (located) while the last good one keeps checking.
    @Test func reloadsReadTheDescriptionAgainAndKeepTheLastGood() async throws {
        let folder = try TemporaryFolder()
        let bad = #"{"name":"Rex","email":42,"kind":"dog"}"#
        let unchecked = try TestServer(yaml: Self.scenarios)
        #expect(try await post(unchecked, bad).status == 201)

        let harness = try serve("pets.yaml", Self.pets30, folder: folder)
        #expect(try await post(harness, bad).status == 400)
        try folder.write("pets.yaml", Self.pets30.replacing("format: email", with: "format: uuid"))
        try harness.service.reload(yaml: Self.scenarios, name: "t.yaml")
        #expect(problems(try await post(harness, #"{"name":"Rex","email":"a@b.c","kind":"dog"}"#))
                == [#"/email: expected a string in format uuid, got "a@b.c""#])
        try folder.write("pets.yaml", "openapi: 3.0.0\npaths:\n  /pets: {post: {requestBody: {content: {application/json: {schema: {$ref: \"#/nowhere\"}}}}}}\n")
        #expect {
            try harness.service.reload(yaml: Self.scenarios, name: "t.yaml")
        } throws: { error in
            (error as? ScenarioError)?.description == "\(folder.path)/pets.yaml:3:76: $ref '#/nowhere' names nothing in this file (no 'nowhere')"
        }
        #expect(problems(try await post(harness, #"{"name":"Rex","email":"a@b.c","kind":"dog"}"#))
                == [#"/email: expected a string in format uuid, got "a@b.c""#])
    }

    @Test func aBrokenDescriptionStopsTheStart() throws {
        let folder = try TemporaryFolder()
        var options = ServiceOptions()
        options.openAPI = try folder.write("swagger.yaml", "swagger: '2.0'\n")
        #expect {
            _ = try TestServer(yaml: Self.scenarios, options: options)
        } throws: { error in
            "\(error)".contains("swagger.yaml:1:10: this is a Swagger 2.0 description")
        }
    }
}
