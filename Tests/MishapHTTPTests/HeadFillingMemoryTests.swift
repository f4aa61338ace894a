import Foundation
import MishapHTTP
import MishapTestSupport
import Testing

/// A request head over Mishap's header limit that still fits the connection's memory, but
/// leaves less room than a response head needs: libmicrohttpd 0.9.75 keeps the head while it
/// builds the response head in the same memory, and has no call that frees it first, so the
/// 431 cannot be sent and the connection is closed without a byte. Heads a little smaller get
/// Mishap's JSON 431; a little larger, libmicrohttpd's own. Kept as a known issue, so a
/// libmicrohttpd that frees the head first shows up as the issue no longer being recorded
/// (docs/libmicrohttpd.md, "A head that fills the connection's memory is closed unanswered").
@Suite(.onBlockingThreads) struct HeadFillingMemoryTests {
    /// What one request got.
    enum Answer: Equatable { case refused(Int), closedUnanswered, other(String) }

    /// Whether `bytes` hold a whole response head and the body its `Content-Length` announces.
    static func holdsOneResponse(_ bytes: [UInt8]) -> Bool {
        guard let headEnd = bytes.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound else { return false }
        let head = String(decoding: bytes[..<headEnd], as: UTF8.self).lowercased()
        guard let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) else { return false }
        return bytes.count >= headEnd + length
    }

    @Test func headsNearTheConnectionsMemoryAreRefusedOrClosedCleanly() throws {
        let server = try TestServer()
        let memory = ServerConfiguration(port: 0).connectionMemoryBytes
        var answers: [Int: Answer] = [:]
        // From heads surely answered by Mishap to heads surely refused by libmicrohttpd.
        for headBytes in stride(from: memory - 640, through: memory + 64, by: 8) {
            let prefix = "GET /isUserNameAvailable?userName=someone HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: "
            let pad = String(repeating: "p", count: headBytes - prefix.utf8.count - 4)
            let connection = try RawHTTPConnection(port: server.port, timeoutSeconds: 5)
            _ = connection.write(Array((prefix + pad + "\r\n\r\n").utf8))
            var received: [UInt8] = []
            let end = connection.read(into: &received, until: .now + .seconds(10), enough: Self.holdsOneResponse)
            connection.close()
            let text = String(decoding: received, as: UTF8.self)
            if received.isEmpty && end == .closed {
                answers[headBytes] = .closedUnanswered
            } else if text.hasPrefix("HTTP/1.1 431 ") && end != .timedOut {
                answers[headBytes] = .refused(431)
            } else {
                answers[headBytes] = .other("\(end): \(text.prefix(80))")
            }
        }
        let unexpected = answers.filter { if case .other = $0.value { true } else { false } }
        #expect(unexpected.isEmpty, "neither a 431 nor a clean close: \(unexpected.sorted { $0.key < $1.key })")
        #expect(answers[memory - 640] == .refused(431) && answers[memory + 64] == .refused(431), "\(answers.sorted { $0.key < $1.key })")
        let unanswered = answers.filter { $0.value == .closedUnanswered }.keys.sorted()
        // The band is narrow: a response head's size, about 150 bytes.
        #expect(unanswered.count * 8 <= 400, "closed unanswered: \(unanswered)")
        withKnownIssue("libmicrohttpd 0.9.75 cannot answer a head that leaves no room for the response head") {
            #expect(unanswered.isEmpty, "closed unanswered: heads of \(unanswered.first ?? 0) to \(unanswered.last ?? 0) bytes")
        }
    }
}
