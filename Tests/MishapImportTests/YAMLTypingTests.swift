import Foundation
import MishapImport
import MishapTestSupport
import Testing

/// A plain YAML scalar has no type of its own: `version: 1.0` is a string to OpenAPI. Where
/// OpenAPIKit wants a string and the YAML gave a number or a boolean, the import reads it as
/// a string, as YAML decoders do; in JSON, where a number is a number, it is an error.
@Suite("Plain YAML numbers where OpenAPI wants strings")
struct YAMLTypingTests {
    static let yaml = """
        openapi: 3.1.0
        info: { title: 2024, version: 1.0 }
        servers:
          - url: 'https://{host}:{port}/'
            variables:
              host: { default: example.com }
              port: { enum: ['443', 8443], default: '443' }
        paths:
          /a:
            get:
              operationId: true
              responses:
                '200':
                  description: ok
                  content:
                    application/json:
                      schema:
                        type: object
                        properties:
                          tags: { type: [array, null], items: { type: string } }
        """

    @Test("In YAML they are read as strings")
    func yamlNumbersAreStrings() throws {
        let temporary = try TemporaryFolder()
        let (_, summary) = try ImportFixtures.imported(try temporary.write("typed.yaml", Self.yaml), into: temporary)
        #expect(summary.description.hasPrefix("Imported 2024 1.0 (OpenAPI 3.1.0) from "), "\(summary)")
        #expect(summary.endpoints == 1)
    }

    @Test("In JSON a number where a string belongs is refused")
    func jsonNumbersAreNot() throws {
        let message = try BadDescriptionTests.failure("typed.json", #"{"openapi": "3.1.0", "info": {"title": "x", "version": 1.0}, "paths": {}}"#)
        #expect(message.hasPrefix("typed.json: not a valid OpenAPI 3.1.0 description: "), "\(message)")
    }
}
