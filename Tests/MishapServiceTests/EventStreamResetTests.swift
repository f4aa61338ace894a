import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MishapService
import MishapTestSupport
import Testing

/// A stream's `reset` and `close` reach the client at once, time after time, after a delay too
/// (a session's latency): with linger 0 and `shutdown(SHUT_RD)` alone, 5 resets of 30 waited
/// for the head deadline and came as a FIN. And the server keeps no socket of them.
@Suite(.onBlockingThreads) struct EventStreamResetTests {
    static func descriptors() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    }

    @Test(arguments: ["/reset", "/close"])
    func everyBreakIsPrompt(_ path: String) async throws {
        let harness = try TestServer(yaml: EventStreamTests.yaml)
        let slow = try await harness.send("PUT", "/__mishap/network?session=n1", body: Data(#"{"latency": "50ms"}"#.utf8))
        #expect(slow.status == 200)
        let before = try Self.descriptors()
        for attempt in 0..<20 {
            let started = ContinuousClock.now
            let connection = try harness.connect(timeoutSeconds: 3)
            try connection.sendRequest("GET", path, headers: [("Connection", "close"), ("X-Mishap-Session", "n1")])
            let (_, end) = try connection.readUntilEnd()
            connection.close()
            #expect(end == (path == "/reset" ? .failed(errno: ECONNRESET) : .closed), "attempt \(attempt)")
            #expect(started.duration(to: .now) < .seconds(1), "attempt \(attempt): \(started.duration(to: .now))")
        }
        #expect(await eventually(within: .seconds(3)) { (try? Self.descriptors()) ?? .max <= before })
    }
}
