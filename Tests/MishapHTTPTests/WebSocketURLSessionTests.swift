import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTestSupport
import Testing

/// A WebSocket client written with URLSessionWebSocketTask: the script's messages, a reply, and
/// what the task reports for a close with a code and for a dropped connection. On Linux,
/// FoundationNetworking speaks WebSocket through libcurl, and only a libcurl built with its
/// WebSocket support (off by default before curl 8.11) can: without it, every task fails at once
/// with `unsupportedURL` (-1002), "WebSockets not supported by libcurl", which is what these
/// tests then check (docs/websocket.md, "What clients see").
@Suite(.onBlockingThreads, .serialized) struct WebSocketURLSessionTests {
    static let yaml = """
        endpoints:
          - endpoint: GET /chat
            rules:
              - name: chat
                respond:
                  websocket:
                    send: [ { text: hello }, { base64: AAEC } ]
                    replies: [ { when: { text: ping }, send: { text: pong } } ]
                    end: { close: 4000, reason: bye, after: 300ms }
          - endpoint: GET /drop
            rules:
              - { name: drop, respond: { websocket: { send: [ { text: hello } ], end: { drop: true, after: 100ms } } } }
        """

    static func url(_ server: TestServer, _ path: String) -> URL {
        URL(string: "ws://127.0.0.1:\(server.port)\(path)")!
    }

    /// The task's first message; nil when this FoundationNetworking's libcurl has no WebSocket
    /// support (checked to be that refusal, and nothing else).
    static func firstMessage(_ task: URLSessionWebSocketTask) async throws -> URLSessionWebSocketTask.Message? {
        do {
            return try await task.receive()
        } catch let error as URLError where error.code == .unsupportedURL {
            #expect(error.localizedDescription.contains("WebSockets not supported by libcurl"))
            return nil
        }
    }

    @Test func aScriptReachesURLSessionWebSocketTask() async throws {
        let server = try TestServer(yaml: Self.yaml)
        let task = URLSession.shared.webSocketTask(with: Self.url(server, "/chat"))
        task.resume()
        guard let first = try await Self.firstMessage(task) else { return }
        guard case .string(let hello) = first else { Issue.record("not a text message"); return }
        #expect(hello == "hello")
        guard case .data(let data) = try await task.receive() else { Issue.record("not a binary message"); return }
        #expect(Array(data) == [0, 1, 2])
        try await task.send(.string("ping"))
        guard case .string(let pong) = try await task.receive() else { Issue.record("not a text message"); return }
        #expect(pong == "pong")
        await #expect(throws: (any Error).self) { _ = try await task.receive() }
        #expect(task.closeCode.rawValue == 4000)
        #expect(task.closeReason == Data("bye".utf8))
    }

    @Test func aDropIsAnErrorWithoutACloseCode() async throws {
        let server = try TestServer(yaml: Self.yaml)
        let task = URLSession.shared.webSocketTask(with: Self.url(server, "/drop"))
        task.resume()
        guard let first = try await Self.firstMessage(task) else { return }
        guard case .string(let hello) = first else { Issue.record("not a text message"); return }
        #expect(hello == "hello")
        await #expect(throws: (any Error).self) { _ = try await task.receive() }
        #expect(task.closeCode == .invalid)
    }
}
