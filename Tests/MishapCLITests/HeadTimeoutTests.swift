import Foundation
import MishapTestSupport
import Testing

/// `serve --head-timeout`: a connection that trickles its request head a header line at a time
/// (each line resets the idle timeout) is closed at the head deadline; 0 turns it off.
@Suite("mishap --head-timeout", .onBlockingThreads)
struct HeadTimeoutTests {
    /// Opens a connection, sends a request line, then a header line every 200 ms for up to
    /// `seconds`; how it ended ("closed", "reset", "send failed …" or "still open") and after how long.
    static func trickle(to port: UInt16, for seconds: Int) -> (end: String, after: Duration) {
        let started = ContinuousClock.now
        do {
            let connection = try RawHTTPConnection(port: port, timeoutSeconds: 2)
            try connection.send("GET /isUserNameAvailable?userName=abc HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            var received: [UInt8] = []
            for line in 0..<(seconds * 5) {
                let end = connection.read(into: &received, until: .now + .milliseconds(200))
                if end != .timedOut { return ("\(end)", .now - started) }
                if let code = connection.write(Array("X-Trickle-\(line): a\r\n".utf8)) {
                    return ("send failed, errno \(code)", .now - started)
                }
            }
            return ("still open", .now - started)
        } catch {
            return ("\(error)", .now - started)
        }
    }

    @Test("--head-timeout 1: a connection trickling its head is closed, though the idle timeout is 30 s")
    func tricklingHeadIsClosed() async throws {
        let (server, port) = try await LimitsTests.serve(["--head-timeout", "1", "--connection-timeout", "30"])
        defer { server.kill() }
        let report = try await onOwnThread { Self.trickle(to: port, for: 8) }
        #expect(["closed", "reset"].contains(report.end) || report.end.hasPrefix("send failed"), "after \(report.after): \(report.end)")
        #expect(report.after >= .milliseconds(900) && report.after < .seconds(6), "closed after \(report.after)")
    }

    @Test("--head-timeout 0: no head deadline; only the idle timeout closes")
    func zeroTurnsItOff() async throws {
        let (server, port) = try await LimitsTests.serve(["--head-timeout", "0", "--connection-timeout", "30"])
        defer { server.kill() }
        let report = try await onOwnThread { Self.trickle(to: port, for: 3) }
        #expect(report.end == "still open", "after \(report.after): \(report.end)")
    }
}
