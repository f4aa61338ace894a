import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
@testable import MishapHTTP
import MishapTestSupport
import Testing

/// WebSocket upgrades on a raw socket, byte by byte: the handshake (RFC 6455's own example key),
/// frames both ways, the closing handshake, the faults as a client's socket sees them, the
/// limit on open sockets, and a server stopped with sockets open.
@Suite(.onBlockingThreads, .serialized) struct WebSocketServerTests {
    static let yaml = """
        endpoints:
          - endpoint: GET /ws
            rules:
              - name: chat
                respond:
                  headers: { X-Chat: yes }
                  websocket:
                    send: [ { text: hello } ]
                    replies: [ { when: { text: ping }, send: { text: pong } } ]
          - endpoint: GET /drop
            rules:
              - { name: drop, respond: { websocket: { send: [ { text: hello } ], end: { drop: true, after: 50ms } } } }
          - endpoint: GET /reset
            rules:
              - { name: reset, respond: { websocket: { send: [ { text: hello } ], end: { reset: true, after: 50ms } } } }
        """

    /// A client over a raw socket: the handshake sent, frames masked.
    final class Client {
        let connection: RawHTTPConnection
        var buffer: [UInt8] = []

        init(port: UInt16, path: String = "/ws", key: String = "dGhlIHNhbXBsZSBub25jZQ==", after: [UInt8] = []) throws {
            connection = try RawHTTPConnection(port: port)
            try connection.send(RawHTTPConnection.request("GET", path, headers: [
                ("Host", "127.0.0.1"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13"),
            ]) + after)
        }

        func head() throws -> ClientResponse { try connection.readResponse(toHead: true) }

        /// A masked frame from the client.
        static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
            let mask: [UInt8] = [1, 2, 3, 4]
            precondition(payload.count < 126)
            return [(fin ? 0x80 : 0) | opcode, 0x80 | UInt8(payload.count)] + mask
                + payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        }

        func send(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true) throws {
            try connection.send(Self.frame(opcode, payload, fin: fin))
        }

        /// The next frame from the server (unmasked, short, final): its opcode and payload; nil
        /// when the socket ends first.
        func frame() throws -> (opcode: UInt8, payload: [UInt8])? {
            while true {
                if buffer.count >= 2 {
                    let length = Int(buffer[1] & 0x7F)
                    #expect(buffer[1] & 0x80 == 0, "a server's frames are never masked")
                    if length < 126, buffer.count >= 2 + length {
                        defer { buffer.removeFirst(2 + length) }
                        #expect(buffer[0] & 0x80 != 0, "the server sends whole messages")
                        return (buffer[0] & 0x0F, Array(buffer[2..<(2 + length)]))
                    }
                }
                switch try connection.receivePiece() {
                case .bytes(let bytes): buffer += bytes
                case .closed, .failed: return nil
                }
            }
        }

        /// How the socket ends after the frames read so far.
        func end() throws -> RawHTTPConnection.Received {
            while true {
                let piece = try connection.receivePiece()
                if case .bytes(let bytes) = piece { buffer += bytes } else { return piece }
            }
        }
    }

    static func text(_ frame: (opcode: UInt8, payload: [UInt8])?) -> String? {
        guard let frame, frame.opcode == 0x1 else { return nil }
        return String(decoding: frame.payload, as: UTF8.self)
    }

    static func closeCode(_ frame: (opcode: UInt8, payload: [UInt8])?) -> Int? {
        guard let frame, frame.opcode == 0x8, frame.payload.count >= 2 else { return nil }
        return Int(frame.payload[0]) << 8 | Int(frame.payload[1])
    }

    @Test func theHandshakeAnswersRFC6455sExampleKeyAndFramesFlow() throws {
        let server = try TestServer(yaml: Self.yaml)
        let client = try Client(port: server.port)
        let head = try client.head()
        #expect(head.status == 101)
        #expect(head.header("Sec-WebSocket-Accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(head.header("Upgrade")?.lowercased() == "websocket")
        #expect(head.header("Connection")?.lowercased() == "upgrade")
        #expect(head.header("X-Chat") == "yes")
        #expect(Self.text(try client.frame()) == "hello")
        try client.send(0x9, Array("are you there".utf8))
        let pong = try client.frame()
        #expect(pong?.opcode == 0xA && pong?.payload == Array("are you there".utf8))
        // A message in two fragments, a ping between them.
        try client.send(0x1, Array("pi".utf8), fin: false)
        try client.send(0x9, [])
        try client.send(0x0, Array("ng".utf8))
        #expect(try client.frame()?.opcode == 0xA)
        #expect(Self.text(try client.frame()) == "pong")
        try client.send(0x8, [0x03, 0xE8] + Array("done".utf8))
        #expect(Self.closeCode(try client.frame()) == 1000)
        #expect(try client.end() == .closed)
    }

    @Test func framesSentWithTheHandshakeAreRead() throws {
        let server = try TestServer(yaml: Self.yaml)
        let client = try Client(port: server.port, after: Client.frame(0x1, Array("ping".utf8)))
        #expect(try client.head().status == 101)
        #expect(Self.text(try client.frame()) == "hello")
        #expect(Self.text(try client.frame()) == "pong")
    }

    @Test func aBadKeyIs400() throws {
        let server = try TestServer(yaml: Self.yaml)
        let client = try Client(port: server.port, key: "short")
        #expect(try client.head().status == 400)
    }

    @Test func anHTTP10HandshakeIs400() throws {
        let server = try TestServer(yaml: Self.yaml)
        let connection = try RawHTTPConnection(port: server.port)
        try connection.send("GET /ws HTTP/1.0\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        let answer = try connection.readResponse()
        #expect(answer.status == 400)
        #expect(answer.text.contains("needs HTTP/1.1"))
    }

    @Test func dropClosesWithoutACloseFrameAndResetResets() throws {
        let server = try TestServer(yaml: Self.yaml)
        let dropped = try Client(port: server.port, path: "/drop")
        #expect(try dropped.head().status == 101)
        #expect(Self.text(try dropped.frame()) == "hello")
        #expect(try dropped.end() == .closed)
        #expect(dropped.buffer.isEmpty, "no close frame before the FIN")

        let reset = try Client(port: server.port, path: "/reset")
        #expect(try reset.head().status == 101)
        #expect(Self.text(try reset.frame()) == "hello")
        #expect(try reset.end() == .failed(errno: ECONNRESET))
        // Half of the announced message came before the reset.
        #expect(reset.buffer.count <= 4 + 512 && reset.buffer.first == 0x81)
    }

    @Test func upgradesBeyondTheLimitAre503UntilASocketCloses() throws {
        let server = try TestServer(yaml: Self.yaml)
        server.server.webSockets.connectionLimit.store(2, ordering: .relaxed)
        let first = try Client(port: server.port), second = try Client(port: server.port)
        #expect(try first.head().status == 101)
        #expect(try second.head().status == 101)
        let third = try Client(port: server.port)
        let refused = try third.head()
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "1")
        // A client that vanishes (a reset) frees its place.
        _ = try first.frame()
        first.connection.abort()
        try waitUntil("the aborted socket is let go") { server.server.webSockets.openConnections < 2 }
        #expect(try Client(port: server.port).head().status == 101)
    }

    @Test func stoppingTheServerClosesEveryOpenSocketWith1001() throws {
        let server = try TestServer(yaml: Self.yaml)
        let clients = try (0..<30).map { _ in try Client(port: server.port) }
        for client in clients {
            #expect(try client.head().status == 101)
            #expect(Self.text(try client.frame()) == "hello")
        }
        try waitUntil("every socket is played") { server.server.webSockets.openConnections == 30 }
        server.instance.stop()
        #expect(server.server.webSockets.openConnections == 0)
        for client in clients {
            #expect(Self.closeCode(try client.frame()) == 1001)
            #expect(try client.end() == .closed)
        }
    }
}

/// Polls `condition` every 10 ms for up to 5 s.
private func waitUntil(_ what: String, _ condition: () -> Bool) throws {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting until \(what)")
            return
        }
        usleep(10_000)
    }
}
