import Foundation
import MishapTesting
import MishapTestSupport
import Testing

/// WebSockets from MishapTesting: a client over a raw socket (URLSessionWebSocketTask does not
/// work with FoundationNetworking on Linux) talks to a script, and `RecordedRequest.webSocket`
/// shows the messages both ways while the socket is open and how it ended once it is over.
@Suite(.onBlockingThreads) struct WebSocketFromSwiftTests {
    static let yaml = """
        endpoints:
          - endpoint: GET /chat
            rules:
              - name: chat
                respond:
                  websocket:
                    send: [ { text: hello } ]
                    replies: [ { when: { text: ping }, send: { text: pong } } ]
          - endpoint: GET /quiet
            rules:
              - name: quiet
                respond: { websocket: { replies: [ { when: { text: ping }, send: { text: pong } } ] } }
          - endpoint: GET /closing
            rules:
              - name: closing
                respond: { websocket: { send: [ { text: hi } ], end: { close: 4000, reason: bye, after: 50ms } } }
          - endpoint: GET /dropping
            rules:
              - name: dropping
                respond: { websocket: { send: [ { text: hi } ], end: { drop: true, after: 50ms } } }
        """

    @Test func theConversationIsRecordedWhileOpenAndTheClientsCloseAtTheEnd() async throws {
        try await Mishap.withServer(scenarios: .yaml(Self.yaml)) { mishap in
            let session = mishap.session()
            let client = try WebSocketTestClient(port: mishap.port, path: "/chat", session: session)
            #expect(try client.readMessage() == WebSocketTestClient.Frame(opcode: 0x1, payload: Array("hello".utf8)))
            try client.send(opcode: 0x1, Array("ping".utf8))
            #expect(try client.readMessage() == WebSocketTestClient.Frame(opcode: 0x1, payload: Array("pong".utf8)))

            // Open: the three messages are there, and no ending.
            let open = try await session.waitForRequest(path: "/chat") { $0.webSocket?.messages.count == 3 }
            let live = try #require(open.webSocket)
            #expect(live.isOpen && live.ending == nil && open.status == 101)
            #expect(live.messages.map(\.direction) == [.sent, .received, .sent])
            #expect(live.messages.map(\.text) == ["hello", "ping", "pong"])
            #expect(live.messages.allSatisfy { $0.kind == .text && !$0.isTruncated })
            #expect(live.sentCount == 2 && live.receivedCount == 1)

            try client.send(opcode: 0x8, [0x03, 0xE8] + Array("done".utf8))
            #expect(try client.readMessage().opcode == 0x8, "the server's close echoes the client's")
            let closed = try await session.waitForRequest(path: "/chat") { $0.webSocket?.isOpen == false }
            let over = try #require(closed.webSocket)
            #expect(over.ending == WebSocketOutcome(how: .close, by: "client", code: 1000, reason: "done"), "\(String(describing: over.ending))")
            #expect(over.messages(.received).map(\.kind) == [.text, .close])
            #expect(over.messages(.received).last?.text == "done")
            #expect(over.messages.last?.direction == .sent && over.messages.last?.kind == .close)
            client.close()
        }
    }

    @Test func aSocketIsOpenBeforeAnyMessagePasses() async throws {
        try await Mishap.withServer(scenarios: .yaml(Self.yaml)) { mishap in
            let session = mishap.session()
            let client = try WebSocketTestClient(port: mishap.port, path: "/quiet", session: session)
            let upgraded = try await session.waitForRequest(path: "/quiet") { $0.webSocket != nil }
            let open = try #require(upgraded.webSocket)
            #expect(open.isOpen && open.messages.isEmpty && open.sentCount == 0 && open.receivedCount == 0)
            try client.send(opcode: 0x1, Array("ping".utf8))
            #expect(try client.readMessage().payload == Array("pong".utf8))
            let talked = try await session.waitForRequest(path: "/quiet") { $0.webSocket?.messages.count == 2 }
            #expect(talked.webSocket?.isOpen == true && talked.webSocket?.messages.map(\.text) == ["ping", "pong"])
            client.close()
            let left = try await session.waitForRequest(path: "/quiet") { $0.webSocket?.isOpen == false }
            #expect(left.webSocket?.ending?.how == .clientLeft)
        }
    }

    @Test func theServersCloseAndDropAreRecordedAsTheirEndings() async throws {
        try await Mishap.withServer(scenarios: .yaml(Self.yaml)) { mishap in
            let session = mishap.session()
            let closing = try WebSocketTestClient(port: mishap.port, path: "/closing", session: session)
            #expect(try closing.readMessage().payload == Array("hi".utf8))
            let close = try closing.readMessage()
            #expect(close.opcode == 0x8 && close.payload == [0x0F, 0xA0] + Array("bye".utf8))
            try closing.send(opcode: 0x8, close.payload)
            let closed = try await session.waitForRequest(path: "/closing") { $0.webSocket?.isOpen == false }
            #expect(closed.webSocket?.ending == WebSocketOutcome(how: .close, by: "server", code: 4000, reason: "bye"))
            #expect(closed.webSocket?.messages(.sent).map(\.kind) == [.text, .close])
            closing.close()

            let dropping = try WebSocketTestClient(port: mishap.port, path: "/dropping", session: session)
            #expect(try dropping.readMessage().payload == Array("hi".utf8))
            #expect(throws: WebSocketTestClient.Ended.self, "a FIN without a close frame") { try dropping.readMessage() }
            let dropped = try await session.waitForRequest(path: "/dropping") { $0.webSocket?.isOpen == false }
            #expect(dropped.webSocket?.ending?.how == .drop)
            #expect(dropped.webSocket?.messages.map(\.kind) == [.text], "no close frame either way")
            dropping.close()
        }
    }

    @Test func aClientLeavingWithoutACloseFrameIsRecorded() async throws {
        try await Mishap.withServer(scenarios: .yaml(Self.yaml)) { mishap in
            let session = mishap.session()
            let client = try WebSocketTestClient(port: mishap.port, path: "/chat", session: session)
            _ = try client.readMessage()
            client.close()
            let left = try await session.waitForRequest(path: "/chat") { $0.webSocket?.isOpen == false }
            #expect(left.webSocket?.ending?.how == .clientLeft)
        }
    }

    @Test func waitingTooLongSaysHowFarTheSocketGot() async throws {
        try await Mishap.withServer(scenarios: .yaml(Self.yaml)) { mishap in
            let session = mishap.session()
            let client = try WebSocketTestClient(port: mishap.port, path: "/chat", session: session)
            _ = try client.readMessage()
            _ = try await session.waitForRequest(path: "/chat") { $0.webSocket?.sentCount == 1 }
            do {
                _ = try await session.waitForRequest(path: "/chat", timeout: .milliseconds(200)) { $0.webSocket?.receivedCount == 5 }
                Issue.record("no client message was sent, yet the wait succeeded")
            } catch let timeout as RequestWaitTimeout {
                #expect(timeout.seen.count == 1)
                #expect("\(timeout)".contains("GET /chat status 101, messages: 1 sent, 0 received, open"), "\(timeout)")
            }
            client.close()
        }
    }
}
