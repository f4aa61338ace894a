import Foundation
import MishapHTTP
import MishapTestSupport
import Testing

/// Request heads whose body framing is refused at once, with Mishap's JSON error body and a
/// close (RFC 9112 sections 6.1 and 6.3), instead of libmicrohttpd waiting for a body it cannot
/// frame until the idle timeout, or reading a body framed differently than a proxy in front
/// would: `Transfer-Encoding` other than `chunked`, with `Content-Length`, several
/// `Content-Length` headers; and `Expect: 100-continue` for a body over the limit.
@Suite(.onBlockingThreads) struct FramingTests {
    /// Sends a head (no body) on a raw connection; the answer, and how the stream ended after it.
    /// The idle timeout is 30 s and the client waits 5: an answer is an answer at once.
    static func answer(to head: String, on server: TestServer) throws -> (response: ClientResponse, end: RawHTTPConnection.Received) {
        let connection = try RawHTTPConnection(port: server.port, timeoutSeconds: 5)
        try connection.send(head)
        let response = try connection.readResponse()
        return (response, try connection.receivePiece())
    }

    /// A POST /login head with `headers`.
    static func loginHead(_ headers: [String]) -> String {
        "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + headers.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    static func expectRefusal(_ answer: (response: ClientResponse, end: RawHTTPConnection.Received), status: Int, reason: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.response.status == status, "\(answer.response.text)", sourceLocation: sourceLocation)
        #expect(answer.response.header("Content-Type") == jsonContentType, sourceLocation: sourceLocation)
        #expect(answer.response.json?["error"] as? Bool == true, sourceLocation: sourceLocation)
        #expect(answer.response.json?["reason"] as? String == reason, sourceLocation: sourceLocation)
        #expect(answer.response.header("Connection")?.lowercased() == "close", sourceLocation: sourceLocation)
        #expect(answer.end == .closed, "the connection stayed open after the refusal", sourceLocation: sourceLocation)
    }

    // MARK: Transfer-Encoding

    /// A final coding other than chunked leaves the body's length unknown: 400 (RFC 9112
    /// section 6.3); chunked after another coding that Mishap does not decode: 501 (section 6.1).
    @Test(arguments: [
        (["Transfer-Encoding: gzip"], 400, #"Transfer-Encoding "gzip" does not end with chunked: the body's length is unknown"#),
        (["Transfer-Encoding: chunked, gzip"], 400, #"Transfer-Encoding "chunked, gzip" does not end with chunked: the body's length is unknown"#),
        (["Transfer-Encoding: identity"], 400, #"Transfer-Encoding "identity" does not end with chunked: the body's length is unknown"#),
        (["Transfer-Encoding: chunked", "Transfer-Encoding: gzip"], 400, #"Transfer-Encoding "chunked, gzip" does not end with chunked: the body's length is unknown"#),
        (["Transfer-Encoding: chunked, chunked"], 400, #"Transfer-Encoding "chunked, chunked" applies chunked more than once"#),
        (["Transfer-Encoding: identity, chunked"], 501, #"Transfer-Encoding "identity, chunked" is not implemented: only chunked is"#),
        (["Transfer-Encoding: gzip, chunked"], 501, #"Transfer-Encoding "gzip, chunked" is not implemented: only chunked is"#),
        (["Transfer-Encoding: gzip", "Transfer-Encoding: chunked"], 501, #"Transfer-Encoding "gzip, chunked" is not implemented: only chunked is"#),
        // Chunked to RFC 9112, but libmicrohttpd would wait for a body it does not read as chunked.
        (["Transfer-Encoding: chunked "], 501, #"Transfer-Encoding "chunked " is not implemented: only chunked is"#),
        (["Transfer-Encoding: chunked,"], 501, #"Transfer-Encoding "chunked," is not implemented: only chunked is"#),
    ])
    func aTransferEncodingOtherThanChunkedIsRefusedAtOnce(headers: [String], status: Int, reason: String) throws {
        let server = try TestServer()
        Self.expectRefusal(try Self.answer(to: Self.loginHead(headers), on: server), status: status, reason: reason)
    }

    @Test func transferEncodingWithContentLengthIsRefused() throws {
        let server = try TestServer()
        let answer = try Self.answer(to: Self.loginHead(["Transfer-Encoding: chunked", "Content-Length: 5"]), on: server)
        Self.expectRefusal(answer, status: 400, reason: "Both Transfer-Encoding and Content-Length")
    }

    /// `chunked` alone, in any case and with spaces before it, is still read.
    @Test(arguments: ["chunked", "Chunked", "  CHUNKED"])
    func chunkedIsStillRead(coding: String) throws {
        let server = try TestServer()
        let connection = try RawHTTPConnection(port: server.port, timeoutSeconds: 5)
        let body = #"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#
        try connection.send(Self.loginHead(["Transfer-Encoding: \(coding)"])
            + String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\n0\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json?["token"] as? String == "c7d83mdla_3ms")
    }

    // MARK: Content-Length

    /// Different lengths make the framing ambiguous (RFC 9112 section 6.3: 400 and a close);
    /// equal ones are refused too (as nginx does, and as libmicrohttpd refuses
    /// `Content-Length: 5, 5`), which RFC 9110 section 8.6 allows.
    @Test(arguments: [["Content-Length: 5", "Content-Length: 10"], ["Content-Length: 2", "content-length: 2"]])
    func severalContentLengthsAreRefused(headers: [String]) throws {
        let server = try TestServer()
        let answer = try Self.answer(to: Self.loginHead(headers), on: server)
        Self.expectRefusal(answer, status: 400, reason: "More than one Content-Length header")
    }

    // MARK: Expect: 100-continue

    @Test func expectContinueOverTheLimitGets413WithoutContinue() throws {
        let server = try TestServer(configuration: ServerConfiguration(port: 0, maxBodyBytes: 1024))
        let connection = try RawHTTPConnection(port: server.port, timeoutSeconds: 5)
        try connection.send(Self.loginHead(["Content-Length: 4096", "Expect: 100-continue"]))
        var received: [UInt8] = []
        let end = connection.read(into: &received, until: .now + .seconds(5))
        let text = String(decoding: received, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 413 "), "\(text)")
        #expect(text.hasSuffix(#"{"error":true,"reason":"Request body larger than 1024 bytes"}"#), "\(text)")
        #expect(end == .closed)
    }

    @Test func expectContinueWithinTheLimitStillGetsContinue() throws {
        let server = try TestServer(configuration: ServerConfiguration(port: 0, maxBodyBytes: 1024))
        let connection = try RawHTTPConnection(port: server.port, timeoutSeconds: 5)
        let body = #"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#
        try connection.send(Self.loginHead(["Content-Length: \(body.utf8.count)", "Expect: 100-continue"]))
        let interim = try connection.readResponse(toHead: true)
        #expect(interim.status == 100)
        try connection.send(body)
        let response = try connection.readResponse()
        #expect(response.status == 200, "\(response.text)")
    }

    // MARK: The request log

    /// A refused head reaches the request log like a 413 or a 431; the engine never sees it.
    @Test func aRefusedHeadIsLoggedAndNotServed() async throws {
        let recording = try RecordingServer()
        let connection = try RawHTTPConnection(port: recording.port, timeoutSeconds: 5)
        try connection.send("POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n")
        #expect(try connection.readResponse().status == 501)
        #expect(await eventually { recording.observer.completed.count == 1 })
        let logged = try #require(recording.observer.completed.first)
        #expect(logged.method == "POST")
        #expect(logged.path == "/upload")
        #expect(logged.status == 501)
        #expect(logged.completedNormally)
        #expect(recording.responder.requests.isEmpty)
    }
}
