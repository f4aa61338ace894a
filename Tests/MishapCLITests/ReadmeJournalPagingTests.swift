import Foundation
import MishapTestSupport
import Testing

/// The README's loop that reads the whole journal page by page, run as written (its URL made
/// the test server's) against a `mishap serve` whose journal is several answers long.
@Suite("README: reading the journal page by page", .onBlockingThreads)
struct ReadmeJournalPagingTests {
    @Test("The paging loop reads every request of a journal larger than one answer")
    func pagingLoopReadsEverything() async throws {
        let block = try ReadmeExampleTests.block("journal-paging")
        let folder = try TemporaryFolder()
        try folder.write("scenarios/upload.yaml", """
            endpoint: POST /upload
            rules:
              - name: ok
                respond: { status: 204 }
            """)
        let (server, port) = try await ServeTests.startServer(["serve", "--scenarios", folder.path + "/scenarios", "--port", "0",
                                                               "--watch", "off", "--log-level", "error"])
        defer { server.kill() }
        let connection = try RawHTTPConnection(port: port)
        // 20 bodies of 64 KiB of control characters: about 7.5 MB of JSON, two answers at least.
        let body = [UInt8](repeating: 0x01, count: 64 << 10)
        for _ in 0..<20 {
            try connection.sendRequest("POST", "/upload", headers: [("Content-Type", "text/plain")], body: body)
            #expect(try connection.readResponse().status == 204)
        }
        try connection.sendRequest("GET", "/__mishap/requests")
        let first = try connection.readResponse()
        #expect((try JSONSerialization.jsonObject(with: first.body) as? [String: Any])?["truncated"] as? Bool == true,
                "one answer holds the whole journal: the example shows nothing")
        let script = folder.path + "/read.py"
        try block.replacingOccurrences(of: "http://127.0.0.1:8080", with: "http://127.0.0.1:\(port)")
            .write(toFile: script, atomically: true, encoding: .utf8)
        let result = try await run("/usr/bin/env", ["python3", script], timeout: .seconds(60))
        #expect(result.status == 0 && result.standardOutput == "20 requests\n", "\(result)")
    }
}
