import Foundation
import MishapImport
import MishapTestSupport
import Testing

/// Descriptions that cannot be imported are refused with a clear error, and nothing is written.
@Suite("Importing descriptions that cannot be imported")
struct BadDescriptionTests {
    /// The error importing `text` (written as `name`) gives; the output folder is not made.
    static func failure(_ name: String, _ text: String) throws -> String {
        let temporary = try TemporaryFolder()
        let file = try temporary.write(name, text)
        let out = temporary.path + "/out"
        do {
            _ = try OpenAPIImporter.importDescription(file: file, into: out, overwrite: false)
        } catch {
            #expect(!FileManager.default.fileExists(atPath: out), "nothing is written for \(name)")
            return error.description.replacingOccurrences(of: temporary.path + "/", with: "")
        }
        Issue.record("\(name) was imported")
        return ""
    }

    @Test("A YAML syntax error is located")
    func brokenYAML() throws {
        let message = try Self.failure("broken.yaml", "openapi: 3.0.3\ninfo:\n  title: x\n  version: '1'\npaths:\n  /a:\n    get: {responses: {200: {description: ok\n")
        #expect(message.hasPrefix("broken.yaml:8:1: YAML syntax: did not find expected ',' or '}' while parsing a flow mapping"), "\(message)")
    }

    @Test("A JSON syntax error is located")
    func brokenJSON() throws {
        let message = try Self.failure("broken.json", "{\n  \"openapi\": \"3.1.0\",\n  \"info\": {\"title\": \"x\" \"version\": \"1\"}\n}\n")
        #expect(message.hasPrefix("broken.json:3:"), "\(message)")
    }

    @Test("A description OpenAPIKit refuses: its words and where")
    func invalidDescription() throws {
        let message = try Self.failure("invalid.json", #"{"openapi": "3.0.3", "info": {"title": "x"}, "paths": {}}"#)
        #expect(message == "invalid.json: not a valid OpenAPI 3.0.3 description: Expected to find `version` key in Document.info but it is missing.", "\(message)")
    }

    @Test("Swagger 2.0 is refused, with what to do")
    func swagger() throws {
        let message = try Self.failure("swagger.yaml", "swagger: '2.0'\ninfo: { title: x, version: '1' }\npaths: {}\n")
        #expect(message.hasPrefix("swagger.yaml: Swagger 2.0 (OpenAPI 2) is not read: only OpenAPI 3.0 and 3.1 are; convert it to OpenAPI 3 first"), "\(message)")
    }

    @Test("Another OpenAPI version, or no openapi key, is refused")
    func otherVersions() throws {
        #expect(try Self.failure("v4.yaml", "openapi: 4.0.0\ninfo: { title: x, version: '1' }\npaths: {}\n")
            == "v4.yaml: OpenAPI 4.0.0 is not read: only 3.0 and 3.1 are")
        #expect(try Self.failure("none.yaml", "info: { title: x }\n").contains("no 'openapi' key"))
        #expect(try Self.failure("list.yaml", "- 1\n").contains("expected a mapping with an 'openapi' key"))
    }

    @Test("A $ref cycle that never reaches a schema is named")
    func cyclicReference() throws {
        let message = try Self.failure("cyclic.yaml", """
            openapi: 3.0.3
            info: { title: Cyclic, version: "1" }
            paths:
              /a:
                get:
                  responses:
                    '200':
                      description: ok
                      content:
                        application/json:
                          schema: { $ref: '#/components/schemas/A' }
            components:
              schemas:
                A: { $ref: '#/components/schemas/B' }
                B: { $ref: '#/components/schemas/A' }
            """)
        #expect(message == "cyclic.yaml: cyclic $ref: #/components/schemas/A -> #/components/schemas/B -> #/components/schemas/A (reached from GET /a): it never reaches a schema", "\(message)")
    }

    @Test("A 50 MB file is refused before it is read")
    func tooLarge() throws {
        let temporary = try TemporaryFolder()
        let file = temporary.path + "/big.json"
        #expect(FileManager.default.createFile(atPath: file, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        try handle.truncate(atOffset: 50 * 1_000_000)
        try handle.close()
        do {
            _ = try OpenAPIImporter.importDescription(file: file, into: temporary.path + "/out", overwrite: false)
            Issue.record("a 50 MB file was imported")
        } catch {
            #expect(error.description == "\(file): the file is 50000000 bytes; a description may be at most 16 MiB (16777216 bytes)")
        }
    }

    @Test("A missing file, and a folder given as the file")
    func missing() throws {
        let temporary = try TemporaryFolder()
        #expect(throws: ImportFailure.self) { try OpenAPIImporter.importDescription(file: temporary.path + "/nope.yaml", into: temporary.path + "/out", overwrite: false) }
        do {
            _ = try OpenAPIImporter.importDescription(file: temporary.path + "/nope.yaml", into: temporary.path + "/out", overwrite: false)
        } catch {
            #expect(error.description == "\(temporary.path)/nope.yaml: cannot read it: No such file or directory")
        }
        do {
            _ = try OpenAPIImporter.importDescription(file: temporary.path, into: temporary.path + "/out", overwrite: false)
        } catch {
            #expect(error.description == "\(temporary.path): not a regular file")
        }
    }

    @Test("External $refs and paths Mishap cannot serve are skipped and said so; the rest is imported")
    func skipped() throws {
        let temporary = try TemporaryFolder()
        let file = try temporary.write("partly.yaml", """
            openapi: 3.1.0
            info: { title: Partly, version: "1" }
            paths:
              /local:
                get:
                  responses:
                    '200': { description: ok, content: { application/json: { schema: { type: object, properties: { a: { not: { type: string } } } } } } }
              /remote:
                get:
                  responses:
                    '200': { $ref: 'other.yaml#/components/responses/Ok' }
              /files/{name}.json:
                get:
                  responses:
                    '200': { description: ok }
            """)
        let (_, summary) = try ImportFixtures.imported(file, into: temporary)
        #expect(summary.endpoints == 2)
        #expect(summary.skipped == [
            "/files/{name}.json: a template inside a segment ('{name}.json'): Mishap's {name} captures a whole segment",
            "GET /remote 200: external $ref 'other.yaml#/components/responses/Ok' not followed; the response is left out",
            "schema keywords not read (values made without them): not",
        ], "\(summary.skipped)")
    }
}
