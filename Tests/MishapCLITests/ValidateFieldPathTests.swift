import Foundation
import MishapTestSupport
import Testing

/// `mishap validate` on a `when.body` field written as JSONPath: a located warning, exit 0, and
/// exit 1 with `--strict`, as for a rule that can never answer.
@Suite("mishap validate: JSONPath field names", .onBlockingThreads)
struct ValidateFieldPathTests {
    @Test("A JSONPath body field is a located warning; --strict fails on it")
    func aJSONPathFieldFailsStrict() async throws {
        let folder = try TemporaryFolder()
        try folder.write("scenarios/orders.yaml", """
            endpoint: POST /orders
            rules:
              - name: bulk
                when: { body: { 'items[?(@.qty>1)]': { present: true } } }
                respond: { status: 201 }
            """)
        let result = try await runMishap(["validate", "scenarios"], currentDirectory: folder.path)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardError.hasPrefix("scenarios/orders.yaml:4:21: warning: body field 'items[?(@.qty>1)]' looks like JSONPath"),
                "\(result.standardError)")
        #expect(result.standardOutput.contains("valid with 1 warning(s)"), "\(result.standardOutput)")
        let strict = try await runMishap(["validate", "--strict", "scenarios"], currentDirectory: folder.path)
        #expect(strict.status == 1, "\(strict)")
    }
}
