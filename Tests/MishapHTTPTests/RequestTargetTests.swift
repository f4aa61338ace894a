import Foundation
import MishapHTTP
import MishapTestSupport
import Testing

/// The request target as the engine sees it: the absolute form proxied clients send is served as
/// its path, and a path holding an encoded NUL (`%00`), which libmicrohttpd's decoding would cut
/// short, is refused.
@Suite(.onBlockingThreads) struct RequestTargetTests {
    // MARK: Absolute form

    /// RFC 9112 section 3.2.2: a server must accept the absolute form, which clients configured
    /// with an HTTP proxy send. Its query still reaches the engine.
    @Test(arguments: [
        "http://127.0.0.1/isUserNameAvailable?userName=page",
        "HTTP://Example.COM:8080/isUserNameAvailable?userName=page",
        "https://[::1]:443/isUserNameAvailable?userName=page",
    ])
    func theAbsoluteFormIsServedAsItsPath(target: String) throws {
        let server = try TestServer()
        let response = try server.sendRaw("GET", target)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json?["userName"] as? String == "page")
        #expect(response.json?["isAvailable"] as? Bool == false)
    }

    @Test(arguments: [
        ("http://example.com", "/", [[String]]()),
        ("http://example.com?x=1", "/", [["x", "1"]]),
        ("http://example.com/a/b?x=1&y=%41", "/a/b", [["x", "1"], ["y", "A"]]),
        ("/plain?x=1", "/plain", [["x", "1"]]),
    ])
    func theEngineGetsThePathAndTheQuery(target: String, path: String, query: [[String]]) throws {
        let recording = try RecordingServer()
        let connection = try RawHTTPConnection(port: recording.port, timeoutSeconds: 5)
        try connection.sendRequest("GET", target)
        #expect(try connection.readResponse().status == 200)
        let request = try #require(recording.responder.requests.first)
        #expect(request.path == path)
        #expect(request.query.map { [$0.name, $0.value] } == query)
    }

    // MARK: Encoded NUL

    /// `%00` in the path would be decoded into the end of libmicrohttpd's C string:
    /// `/isUserNameAvailable%00.php` would be served as `/isUserNameAvailable`.
    @Test(arguments: [
        "/isUserNameAvailable%00.php?userName=page",
        "/isUserNameAvailable%00?userName=page",
        "http://127.0.0.1/isUserNameAvailable%00.php?userName=page",
    ])
    func anEncodedNulInThePathIsRefused(target: String) throws {
        let server = try TestServer()
        let connection = try server.connect(timeoutSeconds: 5)
        try connection.sendRequest("GET", target)
        let response = try connection.readResponse()
        #expect(response.status == 400, "\(response.text)")
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.json?["reason"] as? String == "Path contains an encoded NUL (%00)")
        #expect(try connection.receivePiece() == .closed)
    }

    /// In the query, values keep their length: `%00` is a byte of the value, as before.
    @Test func anEncodedNulInTheQueryIsAByteOfTheValue() throws {
        let recording = try RecordingServer()
        let connection = try RawHTTPConnection(port: recording.port, timeoutSeconds: 5)
        try connection.sendRequest("GET", "/isUserNameAvailable?userName=a%00b")
        #expect(try connection.readResponse().status == 200)
        let request = try #require(recording.responder.requests.first)
        #expect(request.path == "/isUserNameAvailable")
        #expect(request.queryValue("userName") == "a\u{0}b")
    }

    /// `%2500` is an encoded `%` followed by `00`, not a NUL.
    @Test func anEncodedPercentBeforeZerosIsNotANul() throws {
        let recording = try RecordingServer()
        let connection = try RawHTTPConnection(port: recording.port, timeoutSeconds: 5)
        try connection.sendRequest("GET", "/a%2500b")
        #expect(try connection.readResponse().status == 200)
        #expect(recording.responder.requests.first?.path == "/a%00b")
    }

    /// The refusal reaches the request log, marked, and the engine never sees the request.
    @Test func anEncodedNulIsLoggedAndNotServed() async throws {
        let recording = try RecordingServer()
        let connection = try RawHTTPConnection(port: recording.port, timeoutSeconds: 5)
        try connection.sendRequest("GET", "/isUserNameAvailable%00.php?userName=page")
        #expect(try connection.readResponse().status == 400)
        #expect(await eventually { recording.observer.completed.count == 1 })
        let logged = try #require(recording.observer.completed.first)
        #expect(logged.method == "GET")
        #expect(logged.path == "/isUserNameAvailable%00")
        #expect(logged.status == 400)
        #expect(recording.responder.requests.isEmpty)
    }

    /// A `%00` request refused by libmicrohttpd itself, before the access handler (its headers
    /// outgrow the connection's memory), is not counted in or out of flight.
    @Test func anEncodedNulRefusedByTheLibraryLeavesNothingInFlight() async throws {
        let recording = try RecordingServer()
        let connection = try RawHTTPConnection(port: recording.port, timeoutSeconds: 5)
        try connection.sendRequest("GET", "/x%00", headers: [("X-Pad", String(repeating: "p", count: 64 << 10))])
        #expect(try connection.readResponse().status == 431)
        let next = try RawHTTPConnection(port: recording.port, timeoutSeconds: 5)
        try next.sendRequest("GET", "/after")
        #expect(try next.readResponse().status == 200)
        #expect(await eventually { recording.server.requestsInFlight == 0 })
        #expect(recording.observer.completed.map(\.path) == ["/after"])
    }
}
