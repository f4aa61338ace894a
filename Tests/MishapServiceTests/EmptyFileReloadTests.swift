import Foundation
import MishapService
import MishapTestSupport
import Testing

/// A scenario file caught empty by a reload (truncated by an editor or `>` before it is written
/// again) is refused like any broken file: the last good scenarios keep answering, and the
/// problem is located at the file's first line.
@Suite(.onBlockingThreads) struct EmptyFileReloadTests {
    /// The file answering `GET /w` with `text`.
    static func scenario(_ text: String) -> String {
        "endpoint: GET /w\nrules:\n  - name: w\n    respond: { text: \(text) }\n"
    }

    /// Writes `text` into the existing file (truncated first, as `>` does).
    static func overwrite(_ path: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// A 0-byte file, then one of only comments and blank lines, each noticed by the watcher
    /// and by a reload asked for; `GET /w` keeps its last good answer throughout.
    @Test func emptyFileKeepsTheLastGoodScenarios() async throws {
        let folder = try TemporaryFolder()
        let file = try folder.write("w.yaml", Self.scenario("v1"), inPlace: true)
        let harness = try TestServer(directory: folder.path, watch: .auto)
        let service = harness.service
        try await Task.sleep(for: .milliseconds(100))
        #expect(try await harness.get("/w").text == "v1")

        for (contents, what) in [("", "is empty"), ("# being written\n\n   \n", "only comments")] {
            try Self.overwrite(file, contents)
            let refused = await eventually { service.lastReloadFailure?.diagnostics.first?.message.contains(what) == true }
            #expect(refused, "the file (\(what)) was not refused within 2 s: \(String(describing: service.lastReloadFailure))")
            let problem = try #require(service.lastReloadFailure?.diagnostics.first)
            #expect(service.lastReloadFailure?.diagnostics.count == 1)
            #expect(problem.description.hasPrefix(file + ":1:1: a scenario file must be a mapping"), "\(problem)")
            #expect(problem.message.contains(what), "\(problem)")

            let answer = try await harness.get("/w")
            #expect(answer.status == 200 && answer.text == "v1", "\(answer.status) \(answer.text)")
            let health = try await harness.admin("health")
            #expect(health["lastReloadFailed"] as? Bool == true)
            #expect(health["endpoints"] as? Int == 1)

            let reload = try await harness.send("POST", "/__mishap/reload")
            #expect(reload.status == 422, "\(reload.text)")
            #expect(reload.text.contains("w.yaml:1:1: a scenario file must be a mapping"), "\(reload.text)")
            #expect(try await harness.get("/w").text == "v1")
        }

        try Self.overwrite(file, Self.scenario("v2"))
        #expect(try await eventually { try await harness.get("/w").text == "v2" })
        #expect(service.lastReloadFailure == nil)
    }
}
