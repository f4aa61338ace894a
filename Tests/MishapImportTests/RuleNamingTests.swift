import Foundation
import MishapImport
import MishapScenarios
import MishapTestSupport
import Testing

/// How imported rules are named: after the response a `$ref` names, else the status's usual
/// name with `statusNNN` as an alias; `4XX` and `default`; a name used twice numbered; the
/// transport failures after the endpoint's own rules; only the last rule answers on its own.
@Suite("Names of imported rules")
struct RuleNamingTests {
    static let description = """
        openapi: 3.0.3
        info: { title: Names, version: "1" }
        paths:
          /things/{id}:
            get:
              responses:
                '200': { description: ok, content: { application/json: { schema: { type: object, properties: { a: { type: string } } } } } }
                '404': { $ref: '#/components/responses/Gone' }
                '410': { $ref: '#/components/responses/Gone' }
                '418': { description: teapot }
                '4XX': { description: client error }
                default: { description: anything else }
                '503': { $ref: '#/components/responses/timeout' }
        components:
          responses:
            Gone: { description: gone }
            timeout: { description: a response named like a transport failure }
        """

    @Test("Declared errors, the catalogue and success, in the order they are tried")
    func names() throws {
        let temporary = try TemporaryFolder()
        let (folder, _) = try ImportFixtures.imported(try temporary.write("names.yaml", Self.description), into: temporary)
        let loaded = try ScenarioLoader.load(directory: folder)
        let endpoint = try #require(loaded.endpoints.first { $0.name == "GET /things/{id}" })
        let rules = endpoint.rules.map { ($0.name, $0.aliases) }
        let expected: [(String, [String])] = [
            ("reset", []), ("dropped", []), ("garbage", []), ("truncated", []), ("truncatedChunked", []), ("lengthMismatch", []),
            ("timeout2", []), ("slowpoke", []), ("trickle", []),
            ("gone", ["status404", "notFound"]), ("gone2", ["status410"]), ("status418", []), ("status4XX", []),
            ("defaultError", ["default", "internalServerError"]), ("timeout", ["status503", "serviceUnavailable"]),
            ("extraField", []), ("byteOrderMark", []), ("truncatedJSON", []), ("success", []),
        ]
        #expect(rules.map(\.0) == expected.map(\.0))
        #expect(rules.map(\.1) == expected.map(\.1))
        #expect(endpoint.rules.dropLast().allSatisfy { $0.chance == 0 } && endpoint.rules.last?.chance == nil)
    }
}
