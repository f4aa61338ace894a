import Foundation
import MishapEngine
@testable import MishapService
import MishapSupport
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Streams under a session's network profile, in process (so the sanitizers see the pacing,
/// the WebSocket loop's shaper and the drain before a reset), over raw sockets: an event
/// stream paced by the bandwidth and reset after N bytes of the stream, and a WebSocket whose
/// first message waits the latency and whose frames are reset after N bytes.
@Suite(.onBlockingThreads) struct StreamNetworkTests {
    static let data = String(repeating: "x", count: 990)
    static let yaml = """
        endpoints:
          - endpoint: GET /events
            rules:
              - name: five
                respond:
                  events:
        \((1...5).map { "            - { id: \($0), data: \"\(data)\" }" }.joined(separator: "\n"))
          - endpoint: GET /ws
            rules:
              - name: many
                respond:
                  websocket:
                    send:
        \((0..<10).map { "              - { text: \"\(String(repeating: String($0), count: 100))\" }" }.joined(separator: "\n"))
        """

    /// The request bytes of a WebSocket handshake for `session`.
    static func upgrade(_ path: String, session: String) -> [UInt8] {
        RawHTTPConnection.request("GET", path, headers: [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("Sec-WebSocket-Version", "13"), ("X-Mishap-Session", session),
        ])
    }

    /// A chunked body's data, as far as whole chunks go.
    static func dechunked(_ body: [UInt8]) -> [UInt8] {
        var data: [UInt8] = []
        var index = 0
        while let lineEnd = body[index...].firstIndex(of: UInt8(ascii: "\r")), lineEnd + 1 < body.count {
            guard let size = Int(String(decoding: body[index..<lineEnd], as: UTF8.self), radix: 16), size > 0,
                  lineEnd + 2 + size <= body.count else { break }
            data += body[(lineEnd + 2)..<(lineEnd + 2 + size)]
            index = lineEnd + 2 + size + 2
            if index >= body.count { break }
        }
        return data
    }

    /// After a head read with `toHead`, the bytes until the stream ends (or `enough`), and how.
    static func rest(of connection: RawHTTPConnection, enough: @escaping ([UInt8]) -> Bool = { _ in false }) throws
        -> ([UInt8], RawHTTPConnection.End) {
        var received: [UInt8] = []
        switch try connection.receivePiece() {
        case .bytes(let bytes): received = bytes
        case .closed: return (received, .closed)
        case .failed(let code): return (received, code == ECONNRESET ? .reset : .failed(errno: code))
        }
        let end = connection.read(into: &received, until: .now + .seconds(10), enough: enough)
        return (received, end)
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = start.duration(to: .now)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    @Test func anEventStreamIsPacedByTheBandwidth() throws {
        let server = try TestServer(yaml: Self.yaml)
        server.service.setNetwork(NetworkProfile(downBytesPerSecond: 2_000), session: "slow")
        let connection = try server.connect()
        let start = ContinuousClock.now
        try connection.sendRequest("GET", "/events", headers: [("X-Mishap-Session", "slow"), ("Connection", "close")])
        let (bytes, end) = try connection.readUntilEnd()
        let took = Self.seconds(since: start)
        #expect(end == .closed, "\(end)")
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200"), "\(text.prefix(100))")
        let body = Self.dechunked(Array(bytes[(bytes.firstRange(of: Array("\r\n\r\n".utf8))!.upperBound)...]))
        let ids = String(decoding: body, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("id: ") }
        #expect(ids == ["id: 1", "id: 2", "id: 3", "id: 4", "id: 5"])
        // About 5,050 bytes at 2,000 a second: 2.5 s, the first piece at once.
        #expect(took >= 2.0, "took \(took) s")
    }

    @Test func anEventStreamIsResetAfterNBytesOfTheStream() throws {
        let server = try TestServer(yaml: Self.yaml)
        server.service.setNetwork(NetworkProfile(resetAfter: .bytes(2_500)), session: "dies")
        let connection = try server.connect()
        try connection.sendRequest("GET", "/events", headers: [("X-Mishap-Session", "dies")])
        let (bytes, end) = try connection.readUntilEnd()
        #expect(end == .failed(errno: ECONNRESET), "\(end)")
        let body = Self.dechunked(Array(bytes[(bytes.firstRange(of: Array("\r\n\r\n".utf8))!.upperBound)...]))
        #expect(body.count == 2_500)
    }

    @Test func aWebSocketsMessageWaitsTheLatencyAndItsFramesAreResetAfterNBytes() throws {
        let server = try TestServer(yaml: Self.yaml)
        server.service.setNetwork(NetworkProfile(latency: .fixed(400)), session: "far")
        server.service.setNetwork(NetworkProfile(resetAfter: .bytes(1_000)), session: "dies")

        let far = try server.connect()
        let start = ContinuousClock.now
        try far.send(Self.upgrade("/ws", session: "far"))
        #expect(try far.readResponse(toHead: true).status == 101)
        let (first, _) = try Self.rest(of: far) { $0.count >= 102 }
        // The 101 after 400 ms, and the first message (a 102-byte frame) 400 ms after that.
        #expect(Array(first.prefix(102)) == [0x81, 100] + Array(repeating: UInt8(ascii: "0"), count: 100))
        #expect(Self.seconds(since: start) >= 0.8, "\(Self.seconds(since: start)) s")

        let dies = try server.connect()
        try dies.send(Self.upgrade("/ws", session: "dies"))
        #expect(try dies.readResponse(toHead: true).status == 101)
        let (frames, end) = try Self.rest(of: dies)
        #expect(end == .reset, "\(end)")
        // Frames of 102 bytes: nine whole ones and 82 bytes of the tenth, then no close frame.
        #expect(frames.count == 1_000)
        #expect(Array(frames.prefix(102)) == [0x81, 100] + Array(repeating: UInt8(ascii: "0"), count: 100))
    }
}
