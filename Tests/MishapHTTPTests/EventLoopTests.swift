#if canImport(Glibc)
import Glibc
#endif
import MishapHTTP
import MishapTestSupport
import Testing

/// Every kind of answer under each event loop libmicrohttpd offers: epoll (the default on
/// Linux) and poll, the portable loop other platforms get. Raw sockets, so what is checked is
/// what goes over the wire.
@Suite(.onBlockingThreads) struct EventLoopTests {
    static let yaml = """
        endpoints:
          - endpoint: GET /loop
            rules:
              - { name: late, when: { query: { kind: late } }, respond: { delay: 300ms, json: { late: true } } }
              - { name: pieces, when: { query: { kind: pieces } }, respond: { dribble: { chunks: 4, duration: 300ms }, text: "abcdefgh" } }
              - { name: reset, when: { query: { kind: reset } }, respond: { fault: reset } }
              - { name: cycle, when: { query: { kind: cycle } }, cycle: [ { status: 503 }, { status: 200 } ] }
              - { name: plain, respond: { json: { ok: true } } }
        """

    static func server(_ loop: ServerConfiguration.EventLoop) throws -> TestServer {
        try TestServer(yaml: yaml, configuration: ServerConfiguration(port: 0, threads: 2, eventLoop: loop))
    }

    @Test(arguments: [ServerConfiguration.EventLoop.epoll, .poll])
    func everyKindOfAnswerArrives(_ loop: ServerConfiguration.EventLoop) throws {
        let server = try Self.server(loop)
        #expect(server.server.eventLoop == loop)
        // Keep-alive: several answers on one connection, a delayed and a dribbled one among them.
        let connection = try server.connect()
        for (query, status, body) in [("", 200, #"{"ok":true}"#), ("?kind=late", 200, #"{"late":true}"#),
                                      ("?kind=pieces", 200, "abcdefgh"), ("?kind=cycle", 503, nil),
                                      ("?kind=cycle", 200, nil)] {
            let started = ContinuousClock.now
            try connection.sendRequest("GET", "/loop" + query)
            let response = try connection.readResponse()
            #expect(response.status == status, "\(loop) \(query)")
            if let body { #expect(response.text == body, "\(loop) \(query)") }
            if query.contains("late") || query.contains("pieces") {
                #expect(ContinuousClock.now - started >= .milliseconds(250), "\(loop) \(query) came early")
            }
        }
        connection.close()
        // A reset, on a connection of its own.
        let resetting = try server.connect()
        try resetting.sendRequest("GET", "/loop?kind=reset")
        let (bytes, end) = try resetting.readUntilEnd()
        #expect(bytes.isEmpty && end == .failed(errno: ECONNRESET), "\(loop): \(bytes.count) bytes, then \(end)")
    }

    @Test(arguments: [ServerConfiguration.EventLoop.epoll, .poll])
    func manyClientsAtOnceAreAnswered(_ loop: ServerConfiguration.EventLoop) async throws {
        let server = try Self.server(loop)
        let port = server.port
        let answered = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<32 {
                group.addTask {
                    try await onOwnThread {
                        let connection = try RawHTTPConnection(port: port)
                        var count = 0
                        for _ in 0..<20 {
                            try connection.sendRequest("GET", "/loop")
                            if try connection.readResponse().status == 200 { count += 1 }
                        }
                        return count
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(answered == 32 * 20)
    }

    @Test func autoIsEpollOnLinux() throws {
        let server = try Self.server(.auto)
        #if os(Linux)
        #expect(server.server.eventLoop == .epoll)
        #else
        #expect(server.server.eventLoop == .poll)
        #endif
    }
}
