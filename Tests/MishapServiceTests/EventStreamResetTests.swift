import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// A stream's `reset` and `close` reach the client at once, time after time, after a delay too
/// (a session's latency): with linger 0 and `shutdown(SHUT_RD)` alone, 5 resets of 30 waited
/// for the head deadline and came as a FIN. And the server keeps no socket of them.
@Suite(.onBlockingThreads) struct EventStreamResetTests {
    /// The server's own TCP connections on `port` that a process still holds (not listening,
    /// and with an inode: one closed by its process is orphaned, inode 0, in TIME_WAIT or in
    /// FIN_WAIT2 until a peer that never closes is timed out by the kernel), from
    /// /proc/net/tcp: counting the test process's descriptors would count the other tests'
    /// sockets too, which run at the same time.
    static func openConnections(port: UInt16) throws -> Int {
        var count = 0
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 3, let colon = fields[1].lastIndex(of: ":"),
                      UInt16(fields[1][fields[1].index(after: colon)...], radix: 16) == port else { continue }
                if fields[3] != "0A", fields.count > 9, fields[9] != "0" { count += 1 }
            }
        }
        return count
    }

    @Test(arguments: ["/reset", "/close"])
    func everyBreakIsPrompt(_ path: String) async throws {
        let harness = try TestServer(yaml: EventStreamTests.yaml)
        // Set in process, not through the admin API: a client's kept-alive connection would be
        // one of the server's sockets until its idle timeout.
        harness.service.setNetwork(NetworkProfile(latency: .fixed(50)), session: "n1")
        for attempt in 0..<20 {
            let started = ContinuousClock.now
            let connection = try harness.connect(timeoutSeconds: 3)
            try connection.sendRequest("GET", path, headers: [("Connection", "close"), ("X-Mishap-Session", "n1")])
            let (_, end) = try connection.readUntilEnd()
            connection.close()
            #expect(end == (path == "/reset" ? .failed(errno: ECONNRESET) : .closed), "attempt \(attempt)")
            // Prompt: the defect this guards against waited for the head deadline (10 s).
            #expect(started.duration(to: .now) < .seconds(5), "attempt \(attempt): \(started.duration(to: .now))")
        }
        // The server is kept until the check is over: released after its last use, it would
        // stop and close every socket, and the check would prove nothing.
        let port = harness.port
        #expect(await eventually(within: .seconds(10)) { (try? Self.openConnections(port: port)) == 0 })
        withExtendedLifetime(harness) {}
    }
}
