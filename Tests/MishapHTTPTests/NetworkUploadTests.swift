import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MishapEngine
import MishapHTTP
import MishapTestSupport
import Testing

/// What a network profile does to a request body on its way in (`Responder.uploadShaping`),
/// as real clients see it: a body read at a rate, an upload that stalls after N bytes, one reset
/// after N bytes, an answer sent before the body is read.
@Suite(.onBlockingThreads) struct NetworkUploadTests {
    /// Answers 200 with the length of the body received.
    static func server(_ shaping: UploadShaping?, log: CapturedLog? = nil) throws -> ShapingServer {
        try ShapingServer(plan: { request in
            ResponsePlan(status: 200, headers: [Field("Content-Type", "text/plain")], body: Array("\(request.body.count)".utf8))
        }, upload: { _ in shaping }, log: log)
    }

    static func upload(_ server: ShapingServer, _ body: [UInt8], _ extra: [String] = [], maxTime: Int = 60) throws -> CurlRun {
        let file = try temporaryFile(body)
        defer { try? FileManager.default.removeItem(at: file) }
        return try curl(["--data-binary", "@\(file.path)", "-H", "Content-Type: application/octet-stream"] + extra + [server.url("/upload")],
                        maxTime: maxTime)
    }

    /// 40 kB read at 20 kB/s: the answer comes after about 2 s, the body whole, and
    /// libmicrohttpd never warns of a piece left unread without a suspension
    /// (docs/libmicrohttpd.md, "A body read at a rate").
    @Test func aBodyIsReadAtTheRate() throws {
        let body = patternedBody(40_000)
        let log = CapturedLog(level: .debug)
        let server = try Self.server(UploadShaping(upBytesPerSecond: 20_000), log: log)
        let run = try Self.upload(server, body, ["-H", "Expect:"])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.fields.first == "200")
        #expect(run.body == Array("40000".utf8))
        #expect(server.responder.requests.first?.body == body)
        #expect(!log.all.contains { $0.message.contains("incomplete upload processing") }, "\(log.all.map(\.message))")
        #expect(run.elapsed >= .milliseconds(1_800), "\(run.elapsed)")
        #expect(run.elapsed < .seconds(10), "\(run.elapsed)")
    }

    /// A chunked body is read at the rate too (libmicrohttpd keeps its place in a chunk left
    /// partly unread): 20 kB at 20 kB/s, about 1 s.
    @Test func aChunkedBodyIsReadAtTheRate() throws {
        let body = patternedBody(20_000)
        let server = try Self.server(UploadShaping(upBytesPerSecond: 20_000))
        let run = try Self.upload(server, body, ["-H", "Expect:", "-H", "Transfer-Encoding: chunked"])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.body == Array("20000".utf8))
        #expect(server.responder.requests.first?.body == body)
        #expect(run.elapsed >= .milliseconds(850), "\(run.elapsed)")
        #expect(run.elapsed < .seconds(10), "\(run.elapsed)")
    }

    /// A request whose upload the responder leaves alone is not held, nor is a request without
    /// a body on a server whose uploads go at 1 kB/s (bounds loose enough for a loaded machine;
    /// a held request would take the 2 s of `aBodyIsReadAtTheRate` or more).
    @Test func requestsLeftAloneAreNotHeld() throws {
        let server = try Self.server(nil)
        let run = try Self.upload(server, patternedBody(40_000), ["-H", "Expect:"])
        #expect(run.body == Array("40000".utf8))
        #expect(run.elapsed < .seconds(5), "\(run.elapsed)")
        let shaped = try Self.server(UploadShaping(upBytesPerSecond: 1_000))
        let get = try curl([shaped.url()])
        #expect(get.fields.first == "200")
        #expect(get.elapsed < .seconds(5), "\(get.elapsed)")
    }

    /// An upload that stalls after 1,000 bytes: the client times out, nothing is answered, what
    /// arrived is told as incomplete once the client leaves, and the server is fine afterwards.
    @Test func anUploadStallsAfterSomeBytes() async throws {
        let server = try Self.server(UploadShaping(fault: .stallAfterBytes(1_000)))
        let run = try Self.upload(server, patternedBody(100_000), ["-H", "Expect:"], maxTime: 2)
        #expect(run.status == 28, "\(run.status) \(run.errors)")
        #expect(run.elapsed >= .seconds(2))
        #expect(server.responder.requests.isEmpty)
        // Released once the client has left (checked every 250 ms).
        let released = await eventually(within: .seconds(10)) { server.server.requestsInFlight == 0 }
        #expect(released)
        #expect(server.observer.incomplete.first?.body == patternedBody(1_000))
        let get = try curl([server.url()])
        #expect(get.fields.first == "200")
    }

    /// A stalled upload is let go when the server stops.
    @Test func aStalledUploadEndsWhenTheServerStops() throws {
        let server = try Self.server(UploadShaping(fault: .stallAfterBytes(10)))
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendRequest("POST", "/upload", body: patternedBody(5_000))
        usleep(300_000)
        let start = ContinuousClock.now
        server.server.stop()
        #expect(start.duration(to: .now) < .seconds(5))
        let (_, end) = try NetworkShapingTests.rest(of: connection)
        #expect(end == .closed || end == .reset, "\(end)")
    }

    /// Reset once 4,000 bytes are read: the client sees a reset, the responder is never asked,
    /// and exactly 4,000 bytes arrived.
    @Test func anUploadIsResetAfterSomeBytes() async throws {
        let server = try Self.server(UploadShaping(fault: .resetAfterBytes(4_000)))
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendRequest("POST", "/upload", body: patternedBody(10_000))
        let (_, end) = try NetworkShapingTests.rest(of: connection)
        #expect(end == .reset, "\(end)")
        #expect(server.responder.requests.isEmpty)
        let told = await eventually(within: .seconds(5)) { !server.observer.incomplete.isEmpty }
        #expect(told)
        #expect(server.observer.incomplete.first?.body == patternedBody(4_000))

        let run = try Self.upload(server, patternedBody(10_000), ["-H", "Expect:"])
        #expect(run.status == 56 || run.status == 55, "\(run.status) \(run.errors)")
    }

    /// A rate and a reset together: 6,000 bytes at 10 kB/s (0.5 s), then the reset.
    @Test func aResetAfterSomeBytesReadAtARate() throws {
        let server = try Self.server(UploadShaping(upBytesPerSecond: 10_000, fault: .resetAfterBytes(6_000)))
        let run = try Self.upload(server, patternedBody(20_000), ["-H", "Expect:"])
        #expect(run.status == 56 || run.status == 55, "\(run.status) \(run.errors)")
        #expect(run.elapsed >= .milliseconds(450), "\(run.elapsed)")
        #expect(server.responder.requests.isEmpty)
    }

    static func earlyAnswer() -> UploadShaping {
        UploadShaping(fault: .answerEarly(413), earlyAnswer: .error(413, reason: "too large for this network"))
    }

    /// Answered early with `Expect: 100-continue`: curl gets the 413 instead of `100 Continue`,
    /// at once (not after its one-second wait for it), and sends no body.
    @Test func anEarlyAnswerComesInsteadOfContinue() throws {
        let server = try Self.server(Self.earlyAnswer())
        let run = try Self.upload(server, patternedBody(2_000_000), ["-H", "Expect: 100-continue", "-v"])
        #expect(run.fields.first == "413", "\(run.output) \(run.errors)")
        #expect(!run.errors.contains("HTTP/1.1 100"), "\(run.errors)")
        #expect(run.elapsed < .milliseconds(900), "\(run.elapsed)")
        #expect(server.responder.requests.isEmpty)
        #expect(server.observer.incomplete.isEmpty)
        #expect(server.observer.completed.first?.status == 413)
        #expect(run.errors.contains("> Expect: 100-continue"), "\(run.errors)")
        #expect(run.errors.contains("< HTTP/1.1 413"), "\(run.errors)")
    }

    /// An early answer with a delay (a profile's latency) is held before it is sent, still
    /// instead of `100 Continue`.
    @Test func aDelayedEarlyAnswerComesInsteadOfContinue() throws {
        var answer = ResponsePlan.error(401, reason: "log in first")
        answer.delayMilliseconds = 600
        let server = try Self.server(UploadShaping(fault: .answerEarly(401), earlyAnswer: answer))
        let run = try Self.upload(server, patternedBody(2_000_000), ["-H", "Expect: 100-continue", "--expect100-timeout", "5", "-v"])
        #expect(run.fields.first == "401", "\(run.output) \(run.errors)")
        #expect(!run.errors.contains("HTTP/1.1 100"), "\(run.errors)")
        #expect(run.elapsed >= .milliseconds(600), "\(run.elapsed)")
        #expect(run.elapsed < .seconds(4), "\(run.elapsed)")
        #expect(server.responder.requests.isEmpty)
        #expect(server.observer.completed.first?.status == 401)
    }

    /// Answered early without `Expect`: a small body sent with the head, the 413 all the same.
    @Test func anEarlyAnswerWithoutExpectContinue() throws {
        let server = try Self.server(Self.earlyAnswer())
        let run = try Self.upload(server, patternedBody(1_000), ["-H", "Expect:"])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.fields.first == "413")
        #expect(String(decoding: run.body, as: UTF8.self).contains("too large for this network"))
        #expect(server.responder.requests.isEmpty)
    }
}
