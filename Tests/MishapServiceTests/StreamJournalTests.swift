import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MishapHTTP
import MishapService
import MishapTestSupport
import Testing

/// The journal following streams as they pass, over real sockets: a WebSocket's messages both
/// ways (counted, the last 20 kept, each cut to 256 bytes) and how it ended; a stream of
/// events counted while it goes on.
@Suite(.onBlockingThreads) struct StreamJournalTests {
    static let yaml = """
        endpoints:
          - endpoint: GET /ws
            rules:
              - name: chat
                respond:
                  websocket:
                    send: [ { text: hello }, { base64: "AAEC" } ]
                    replies: [ { when: { text: ping }, send: { text: pong } } ]
          - endpoint: GET /bye
            rules:
              - name: bye
                respond:
                  websocket:
                    send: [ { text: hi } ]
                    end: { close: 4000, reason: "go away", after: 50ms }
          - endpoint: GET /drop
            rules:
              - { name: drop, respond: { websocket: { send: [ { text: hello } ], end: { drop: true, after: 50ms } } } }
          - endpoint: GET /sse
            rules:
              - name: slow
                respond:
                  events: [ { id: 7, data: one }, { id: 8, data: two, delay: 20s } ]
        """

    /// A masked client frame (any length).
    static func frame(_ opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let mask: [UInt8] = [9, 8, 7, 6]
        var head: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            head.append(0x80 | UInt8(payload.count))
        } else {
            head += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        return head + mask + payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
    }

    /// Opens a WebSocket on `path`: the connection once its 101 came.
    static func upgrade(_ harness: TestServer, _ path: String) throws -> RawHTTPConnection {
        let connection = try harness.connect()
        try connection.send(RawHTTPConnection.request("GET", path, headers: [
            ("Host", "127.0.0.1"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
        ]))
        #expect(try connection.readResponse(toHead: true).status == 101)
        return connection
    }

    /// The `webSocket` object of the last journal entry for `path` once `condition` holds.
    static func socket(_ harness: TestServer, _ path: String, until condition: @escaping ([String: Any]) -> Bool) async throws -> [String: Any] {
        var socket: [String: Any] = [:]
        let held = try await eventually(within: .seconds(5)) {
            socket = try await harness.journal("path=\(path)").last?["webSocket"] as? [String: Any] ?? [:]
            return condition(socket)
        }
        #expect(held, "journal's webSocket: \(socket)")
        return socket
    }

    static func messages(_ socket: [String: Any]) -> [[String: Any]] { socket["messages"] as? [[String: Any]] ?? [] }

    @Test func messagesAreJournaledAsTheyPassThenTheClientsClose() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let connection = try Self.upgrade(harness, "/ws")
        // The server's two messages, seen while the socket is open.
        let open = try await Self.socket(harness, "/ws") { ($0["sent"] as? Int) == 2 }
        #expect(open["over"] as? Bool == false)
        #expect(open["ending"] is NSNull)
        let first = Self.messages(open)
        #expect(first.count == 2)
        #expect(first.first?["direction"] as? String == "sent" && first.first?["kind"] as? String == "text")
        #expect(first.first?["text"] as? String == "hello" && first.first?["truncated"] as? Bool == false)
        #expect(first.last?["kind"] as? String == "binary" && first.last?["base64"] as? String == "AAEC")

        try connection.send(Self.frame(0x1, Array("ping".utf8)))
        try connection.send(Self.frame(0x9, Array("are you there".utf8)))
        // 300 bytes, the last a two-byte character cut at byte 256.
        let long = String(repeating: "a", count: 255) + String(repeating: "é", count: 20) + "z"
        try connection.send(Self.frame(0x1, Array(long.utf8)))
        try connection.send(Self.frame(0x8, [0x03, 0xE8] + Array("done".utf8)))
        let over = try await Self.socket(harness, "/ws") { $0["over"] as? Bool == true }
        #expect(over["received"] as? Int == 4)
        #expect(over["sent"] as? Int == 5, "hello, binary, pong reply, pong to the ping, close echo")
        let ending = over["ending"] as? [String: Any] ?? [:]
        #expect(ending["how"] as? String == "close" && ending["by"] as? String == "client")
        #expect(ending["code"] as? Int == 1000 && ending["reason"] as? String == "done")
        let messages = Self.messages(over)
        let received = messages.filter { $0["direction"] as? String == "received" }
        #expect(received.map { $0["kind"] as? String ?? "" } == ["text", "ping", "text", "close"])
        #expect(received[0]["text"] as? String == "ping")
        #expect(received[1]["base64"] as? String == Data("are you there".utf8).base64EncodedString())
        #expect(received[2]["truncated"] as? Bool == true && received[2]["size"] as? Int == long.utf8.count)
        #expect(received[2]["text"] as? String == String(repeating: "a", count: 255), "the cut character is left out")
        #expect(received[3]["code"] as? Int == 1000 && received[3]["text"] as? String == "done")
        #expect(messages.contains { $0["direction"] as? String == "sent" && $0["text"] as? String == "pong" })
    }

    @Test func onlyTheLast20MessagesAreKept() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let connection = try Self.upgrade(harness, "/ws")
        for index in 0..<30 { try connection.send(Self.frame(0x1, Array("m\(index)".utf8))) }
        let socket = try await Self.socket(harness, "/ws") { ($0["received"] as? Int) == 30 }
        let messages = Self.messages(socket)
        #expect(messages.count == 20)
        #expect(messages.last?["text"] as? String == "m29")
        connection.close()
        let over = try await Self.socket(harness, "/ws") { $0["over"] as? Bool == true }
        #expect((over["ending"] as? [String: Any])?["how"] as? String == "clientLeft")
    }

    @Test func theScriptsEndingsAreJournaled() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let bye = try Self.upgrade(harness, "/bye")
        let closed = try await Self.socket(harness, "/bye") { ($0["sent"] as? Int) == 2 }
        let last = Self.messages(closed).last ?? [:]
        #expect(last["kind"] as? String == "close" && last["code"] as? Int == 4000 && last["text"] as? String == "go away")
        bye.close()
        let ending = try await Self.socket(harness, "/bye") { $0["over"] as? Bool == true }["ending"] as? [String: Any] ?? [:]
        #expect(ending["how"] as? String == "close" && ending["by"] as? String == "server" && ending["code"] as? Int == 4000)

        let drop = try Self.upgrade(harness, "/drop")
        let dropped = try await Self.socket(harness, "/drop") { $0["over"] as? Bool == true }
        #expect((dropped["ending"] as? [String: Any])?["how"] as? String == "drop")
        drop.close()
    }

    @Test func theServerStoppingIsJournaled() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let connection = try Self.upgrade(harness, "/ws")
        _ = try await Self.socket(harness, "/ws") { ($0["sent"] as? Int) == 2 }
        let service = harness.service
        _ = try await onOwnThread { harness.server.stop() }
        let entry = service.journal.entries(matching: JournalFilter(path: "/ws")).entries.last
        #expect(entry?.webSocket?.ending?.how == .serverStopped)
        #expect(entry?.webSocket?.messages.last?.kind == "close")
        connection.close()
    }

    @Test func anEventStreamIsCountedWhileItGoesOn() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let connection = try harness.connect()
        try connection.sendRequest("GET", "/sse", headers: [("Connection", "close")])
        var stream: [String: Any] = [:]
        let counted = try await eventually(within: .seconds(5)) {
            stream = try await harness.journal("path=/sse").last?["eventStream"] as? [String: Any] ?? [:]
            return stream["events"] as? Int == 1
        }
        #expect(counted, "eventStream: \(stream)")
        #expect(stream["over"] as? Bool == false && stream["lastEventId"] as? String == "7")
        connection.close()
    }
}
