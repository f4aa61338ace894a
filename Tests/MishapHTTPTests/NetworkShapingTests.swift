import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MishapEngine
import MishapHTTP
import MishapTestSupport
import Testing

/// What a network profile does to an answer on the socket (`ResponsePlan.network`), as real
/// clients see it: a body sent at a rate, pieces with a latency between them, a reset after N
/// bytes of the body, a slow close. Times are measured with strict lower bounds and generous
/// upper ones (the machine may be loaded).
@Suite(.onBlockingThreads) struct NetworkShapingTests {
    /// A 200 answer with `body`, shaped by `shaping`.
    static func plan(_ body: [UInt8], _ shaping: NetworkShaping?, dribble: Dribble? = nil) -> ResponsePlan {
        var plan = ResponsePlan(status: 200, headers: [Field("Content-Type", "application/octet-stream")], body: body,
                                dribble: dribble)
        plan.network = shaping
        return plan
    }

    static func server(_ body: [UInt8], _ shaping: NetworkShaping?, dribble: Dribble? = nil) throws -> ShapingServer {
        let plan = plan(body, shaping, dribble: dribble)
        return try ShapingServer(plan: { _ in plan })
    }

    /// What comes after a response's head until the stream ends (or 10 s pass).
    static func rest(of connection: RawHTTPConnection) throws -> ([UInt8], RawHTTPConnection.End) {
        try connection.restOfStream(until: .now + .seconds(10))
    }

    /// 40 kB at 20 kB/s: about 2 s (the first tenth of a second's worth at once), whole.
    @Test func aBodyArrivesAtTheRate() throws {
        let body = patternedBody(40_000)
        let server = try Self.server(body, NetworkShaping(profile: "test", downBytesPerSecond: 20_000))
        let run = try curl([server.url()])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.body == body)
        #expect(run.elapsed >= .milliseconds(1_800), "\(run.elapsed)")
        #expect(run.elapsed < .seconds(10), "\(run.elapsed)")
    }

    /// The figure: 200 kB at 20 kB/s takes about 10 s.
    @Test func twoHundredKilobytesAtTwentyKilobytesASecondTakeAboutTenSeconds() throws {
        let body = patternedBody(200_000)
        let server = try Self.server(body, NetworkShaping(profile: "test", downBytesPerSecond: 20_000))
        let run = try curl([server.url()])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.body == body)
        #expect(run.elapsed >= .seconds(8), "\(run.elapsed)")
        #expect(run.elapsed <= .seconds(25), "\(run.elapsed)")
    }

    /// A rate keeps the connection alive (4 kB at 10 kB/s: 4 pieces, the last 0.3 s after the
    /// first), and an unshaped answer on it comes at once.
    @Test func aShapedAnswerKeepsTheConnection() throws {
        let body = patternedBody(4_000)
        let shaped = Self.plan(body, NetworkShaping(profile: "test", downBytesPerSecond: 10_000))
        let plain = Self.plan(body, nil)
        let server = try ShapingServer(plan: { $0.path == "/shaped" ? shaped : plain })
        let connection = try RawHTTPConnection(port: server.port)
        let start = ContinuousClock.now
        try connection.sendRequest("GET", "/shaped")
        let first = try connection.readResponse()
        let shapedTime = start.duration(to: .now)
        #expect([UInt8](first.body) == body)
        #expect(first.header("Connection")?.lowercased() != "close")
        #expect(shapedTime >= .milliseconds(290), "\(shapedTime)")
        try connection.sendRequest("GET", "/plain")
        #expect([UInt8](try connection.readResponse().body) == body)
    }

    /// A dribble is capped by the rate: 2 pieces over 100 ms still take the rate's 2 s.
    @Test func theRateCapsADribble() throws {
        let body = patternedBody(40_000)
        let server = try Self.server(body, NetworkShaping(profile: "test", downBytesPerSecond: 20_000),
                                     dribble: Dribble(chunks: 2, milliseconds: 100))
        let run = try curl([server.url()])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.body == body)
        #expect(run.elapsed >= .milliseconds(1_800), "\(run.elapsed)")
        #expect(run.elapsed < .seconds(10), "\(run.elapsed)")
    }

    /// Per-piece latency: 5 kB at 10 kB/s is 5 pieces (0.4 s); 200 ms before each of the 4 after
    /// the first adds 0.8 s, and jitter up to 100 ms each at most 0.4 s more.
    @Test func latencyAndJitterComeBeforeEachPieceAfterTheFirst() throws {
        let body = patternedBody(5_000)
        let server = try Self.server(body, NetworkShaping(profile: "test", downBytesPerSecond: 10_000,
                                                          chunkLatencyMilliseconds: 200, chunkJitterMilliseconds: 100))
        let connection = try RawHTTPConnection(port: server.port)
        let start = ContinuousClock.now
        try connection.sendRequest("GET", "/")
        let response = try connection.readResponse()
        let elapsed = start.duration(to: .now)
        #expect([UInt8](response.body) == body)
        #expect(elapsed >= .milliseconds(1_200), "\(elapsed)")
        #expect(elapsed < .seconds(10), "\(elapsed)")
    }

    /// The download that dies at byte N: the head, exactly N bytes of the body, then a reset.
    @Test(arguments: [ByteMark.bytes(4_000), .fraction(0.4)])
    func aResetAfterSomeBytesOfTheBody(mark: ByteMark) throws {
        let body = patternedBody(10_000)
        let server = try Self.server(body, NetworkShaping(profile: "test", resetAfter: mark))
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendRequest("GET", "/")
        let head = try connection.readResponse(toHead: true)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "10000")
        let (received, end) = try Self.rest(of: connection)
        #expect(end == .reset)
        #expect(received == Array(body[..<4_000]))

        // curl: a receive error (56), exactly 4,000 bytes kept.
        let run = try curl([server.url()])
        #expect(run.status == 56 || run.status == 18, "\(run.status) \(run.errors)")
        #expect(run.body == Array(body[..<4_000]))
        #expect(run.fields.last == "4000")
    }

    /// A reset after 0 bytes of the body: the head, then the reset.
    @Test func aResetAfterNoBytesOfTheBodyStillSendsTheHead() throws {
        let server = try Self.server(patternedBody(10_000), NetworkShaping(profile: "test", resetAfter: .bytes(0)))
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendRequest("GET", "/")
        let head = try connection.readResponse(toHead: true)
        #expect(head.status == 200)
        let (received, end) = try Self.rest(of: connection)
        #expect(end == .reset)
        #expect(received.isEmpty)
    }

    /// A reset after N bytes at a rate: the bytes come at the rate, then the reset.
    @Test func aResetAfterSomeBytesAtARate() throws {
        let body = patternedBody(20_000)
        let server = try Self.server(body, NetworkShaping(profile: "test", downBytesPerSecond: 20_000,
                                                          resetAfter: .bytes(10_000)))
        let run = try curl([server.url()])
        #expect(run.status == 56, "\(run.status) \(run.errors)")
        #expect(run.body == Array(body[..<10_000]))
        #expect(run.elapsed >= .milliseconds(400), "\(run.elapsed)")
    }

    /// A slow close: the whole body (per its Content-Length) at once, the close only after the
    /// wait (3 s, so that curl, which takes the answer without waiting for the close, is told
    /// from it on a loaded machine: measured 0.04 s).
    @Test func aSlowCloseSendsTheWholeAnswerAndClosesLater() throws {
        let body = patternedBody(10_000)
        let server = try Self.server(body, NetworkShaping(profile: "test", slowCloseMilliseconds: 3_000))
        let connection = try RawHTTPConnection(port: server.port)
        let start = ContinuousClock.now
        try connection.sendRequest("GET", "/")
        let response = try connection.readResponse()
        let whole = start.duration(to: .now)
        #expect(response.status == 200)
        #expect(response.header("Content-Length") == "10000")
        #expect(response.header("Transfer-Encoding") == nil)
        // The server says it closes (its keep-alive is given up for the slow close).
        #expect(response.header("Connection")?.lowercased() == "close", "\(response.headers)")
        #expect([UInt8](response.body) == body)
        #expect(whole < .milliseconds(2_500), "\(whole)")
        var after: [UInt8] = []
        let end = connection.read(into: &after, until: .now + .seconds(10))
        let closed = start.duration(to: .now)
        #expect(end == .closed)
        #expect(after.isEmpty)
        #expect(closed >= .milliseconds(3_000), "\(closed)")
        #expect(closed < .seconds(10), "\(closed)")

        // curl takes the answer as complete once its Content-Length is in, before the close.
        let run = try curl([server.url()])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.body == body)
        #expect(run.elapsed < .milliseconds(2_900), "\(run.elapsed)")
    }

    /// An upstream's answer (sent from its own storage, `carryOutUncopied`) goes through the
    /// profile too: at the rate, then cut by the reset.
    @Test func anUpstreamsAnswerIsShapedToo() throws {
        let body = patternedBody(20_000)
        var forwarded = ResponsePlan(status: 200, body: [])
        forwarded.destination = .serverUpstream
        let answer = Self.plan(body, NetworkShaping(profile: "test", downBytesPerSecond: 20_000, resetAfter: .fraction(0.5)))
        let server = try ShapingServer(plan: { [forwarded] _ in forwarded }, upstream: { _ in answer })
        let run = try curl([server.url()])
        #expect(run.status == 56, "\(run.status) \(run.errors)")
        #expect(run.body == Array(body[..<10_000]))
        #expect(run.elapsed >= .milliseconds(400), "\(run.elapsed)")
    }

    /// HEAD gets the head a GET would, shaped or not, and the server goes on serving.
    @Test(arguments: [NetworkShaping(profile: "rate", downBytesPerSecond: 5_000),
                      NetworkShaping(profile: "reset", resetAfter: .bytes(10)),
                      NetworkShaping(profile: "slow-close", slowCloseMilliseconds: 300)])
    func headIsAnsweredWithTheHeadOnly(shaping: NetworkShaping) throws {
        let body = patternedBody(5_000)
        let server = try Self.server(body, shaping)
        let connection = try RawHTTPConnection(port: server.port)
        let start = ContinuousClock.now
        try connection.sendRequest("HEAD", "/")
        let head = try connection.readResponse(toHead: true)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "5000")
        #expect(start.duration(to: .now) < .seconds(5))
        #expect(try curl([server.url()]).body.count == (shaping.resetAfter == nil ? 5_000 : 10))
    }

    /// URLSession: a body at a rate arrives whole; one cut by a reset fails as a lost connection.
    @Test func urlSessionThroughAProfile() async throws {
        let body = patternedBody(10_000)
        let slow = Self.plan(body, NetworkShaping(profile: "test", downBytesPerSecond: 10_000))
        let cut = Self.plan(body, NetworkShaping(profile: "test", resetAfter: .bytes(3_000)))
        let server = try ShapingServer(plan: { $0.path == "/cut" ? cut : slow })
        let start = ContinuousClock.now
        let response = try await testSession.clientResponse("GET", URL(string: server.url("/slow"))!)
        #expect([UInt8](response.body) == body)
        #expect(start.duration(to: .now) >= .milliseconds(900))
        let error = await urlError { try await testSession.clientResponse("GET", URL(string: server.url("/cut"))!) }
        #expect(error?.code == .networkConnectionLost, "\(String(describing: error))")
    }

    /// A thousand answers held by a rate at once (2,000 bytes at 1,000 bytes/s: 20 pieces, 1.9 s
    /// each) hold no thread: an unshaped answer meanwhile comes at once, and every shaped one
    /// arrives whole, none before its time.
    @Test func aThousandShapedAnswersDoNotHoldUpOthers() throws {
        let body = patternedBody(2_000)
        let shaped = Self.plan(body, NetworkShaping(profile: "test", downBytesPerSecond: 1_000))
        let plain = Self.plan(Array("fast".utf8), nil)
        let server = try ShapingServer(plan: { $0.path == "/fast" ? plain : shaped })
        var connections: [(RawHTTPConnection, ContinuousClock.Instant)] = []
        for _ in 0..<1_000 {
            let connection = try RawHTTPConnection(port: server.port, timeoutSeconds: 60)
            let sent = ContinuousClock.now
            try connection.sendRequest("GET", "/shaped")
            connections.append((connection, sent))
        }
        let fast = try RawHTTPConnection(port: server.port)
        let asked = ContinuousClock.now
        try fast.sendRequest("GET", "/fast")
        #expect(try fast.readResponse().text == "fast")
        // A server whose threads waited out the pieces would take minutes (1,000 answers of 20
        // pieces a tenth of a second apart, on 2 threads); 5 s leaves room for a loaded machine.
        #expect(asked.duration(to: .now) < .seconds(5), "\(asked.duration(to: .now))")
        var early = 0
        var wrong = 0
        for (connection, sent) in connections {
            let response = try connection.readResponse()
            if [UInt8](response.body) != body { wrong += 1 }
            if sent.duration(to: .now) < .milliseconds(1_900) { early += 1 }
        }
        #expect(wrong == 0)
        #expect(early == 0)
    }
}
