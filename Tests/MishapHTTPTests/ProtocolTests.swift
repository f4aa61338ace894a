import Foundation
import MishapTestSupport
import Testing
import MishapHTTP

/// HTTP as the seed server speaks it: HEAD, 404s, Date, keep-alive, body limits, safe placeholders.
@Suite(.onBlockingThreads) struct ProtocolTests {
    // MARK: HEAD

    @Test(arguments: [
        "/isUserNameAvailable?userName=someone",
        "/isUserNameAvailable?userName=servererror",
        "/isUserNameAvailable?userName=maintenance!",
        "/isUserNameAvailable?userName=ab",
        "/isUserNameAvailable",
        "/nowhere",
    ])
    func headAnswersLikeGetWithoutABody(target: String) throws {
        let server = try TestServer()
        let get = try server.sendRaw("GET", target)
        #expect(!get.body.isEmpty)

        let connection = try server.connect()
        try connection.sendRequest("HEAD", target, headers: [("Connection", "close")])
        let head = try connection.readResponse(toHead: true)
        let rest = try connection.readToEnd()

        #expect(head.status == get.status)
        #expect(head.header("Content-Type") == get.header("Content-Type"))
        #expect(head.header("Content-Type") == jsonContentType)
        #expect(head.header("Retry-After") == get.header("Retry-After"))
        #expect(head.header("Content-Length") == String(get.body.count))
        #expect(rest.isEmpty, "HEAD sent a body: \(String(decoding: rest, as: UTF8.self))")
    }

    @Test func headThenGetOnOneConnection() throws {
        // Had HEAD sent a body, the GET's response would start with those bytes.
        let server = try TestServer()
        let connection = try server.connect()
        try connection.sendRequest("HEAD", "/isUserNameAvailable?userName=someone")
        let head = try connection.readResponse(toHead: true)
        #expect(head.status == 200)
        #expect(head.header("Connection")?.lowercased() != "close")

        try connection.sendRequest("GET", "/isUserNameAvailable?userName=page")
        let get = try connection.readResponse()
        #expect(get.httpVersion == "HTTP/1.1")
        #expect(get.status == 200)
        #expect(get.json?["userName"] as? String == "page")
    }

    @Test func headThroughURLSessionHasNoBody() async throws {
        let server = try TestServer()
        let response = try await server.send("HEAD", "/isUserNameAvailable?userName=maintenance!")
        #expect(response.status == 500)
        #expect(response.header("Retry-After") == "17")
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.body.isEmpty)
    }

    // MARK: Not Found

    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH"])
    func otherMethodsOnTheUserNamePathAreNotFound(method: String) async throws {
        let server = try TestServer()
        let response = try await server.send(method, "/isUserNameAvailable?userName=someone", body: Data("{}".utf8),
                                             headers: ["Content-Type": "application/json"])
        expectNotFound(response)
    }

    @Test(arguments: ["/", "/nowhere", "/isusernameavailable?userName=someone", "/login/extra"])
    func unknownPathsAreNotFound(target: String) async throws {
        let server = try TestServer()
        let response = try await server.send("GET", target)
        expectNotFound(response)
    }

    @Test func getOnLoginIsNotFound() async throws {
        let server = try TestServer()
        expectNotFound(try await server.send("GET", "/login"))
    }

    /// John's login answered: a 200 with his token.
    func expectJohnsToken(_ response: ClientResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 200, sourceLocation: sourceLocation)
        #expect(response.json?["token"] as? String == "c7d83mdla_3ms", sourceLocation: sourceLocation)
    }

    /// `someone` answered: a 200 with the name.
    func expectSomeone(_ response: ClientResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 200, sourceLocation: sourceLocation)
        #expect(response.json?["userName"] as? String == "someone", sourceLocation: sourceLocation)
    }

    func expectNotFound(_ response: ClientResponse) {
        #expect(response.status == 404)
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.text == #"{"error":true,"reason":"Not Found"}"#)
    }

    // MARK: Headers every response carries

    @Test func responsesCarryADateAndAContentLength() throws {
        let server = try TestServer()
        let response = try server.sendRaw("GET", "/isUserNameAvailable?userName=someone")
        #expect(response.httpVersion == "HTTP/1.1")
        let date = try #require(response.header("Date"))
        // An IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
        #expect(date.wholeMatch(of: /[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT/) != nil, "Date: \(date)")
        #expect(response.header("Content-Length") == String(response.body.count))
    }

    @Test func urlSessionSeesTheDateHeader() async throws {
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=someone")
        #expect(response.header("Date")?.hasSuffix("GMT") == true)
    }

    // MARK: Keep-alive

    @Test func twoRequestsShareOneConnection() throws {
        let server = try TestServer()
        let connection = try server.connect()

        try connection.sendRequest("GET", "/isUserNameAvailable?userName=someone")
        let first = try connection.readResponse()
        #expect(first.status == 200)
        #expect(first.httpVersion == "HTTP/1.1")
        #expect(first.header("Connection")?.lowercased() != "close")
        #expect(first.json?["userName"] as? String == "someone")

        try connection.sendRequest("GET", "/isUserNameAvailable?userName=page")
        let second = try connection.readResponse()
        #expect(second.status == 200)
        #expect(second.json?["isAvailable"] as? Bool == false)
        #expect(second.json?["userName"] as? String == "page")
    }

    @Test func requestsWithBodiesAndErrorsKeepTheConnection() throws {
        // A body on one request must not leak into the next one on the same connection.
        let server = try TestServer()
        let connection = try server.connect()

        try connection.sendRequest("POST", "/login", headers: [("Content-Type", "application/json")],
                                   body: Array(#"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#.utf8))
        let login = try connection.readResponse()
        expectJohnsToken(login)
        #expect(login.header("Connection")?.lowercased() != "close")

        try connection.sendRequest("POST", "/login", headers: [("Content-Type", "application/json")])
        let empty = try connection.readResponse()
        #expect(empty.status == 400)
        #expect(empty.json?["error_message"] as? String == "Email and password are required.")

        try connection.sendRequest("GET", "/isUserNameAvailable?userName=servererror")
        let failure = try connection.readResponse()
        #expect(failure.status == 500)
        #expect(failure.header("Connection")?.lowercased() != "close")

        try connection.sendRequest("GET", "/nowhere")
        let notFound = try connection.readResponse()
        #expect(notFound.status == 404)

        try connection.sendRequest("GET", "/isUserNameAvailable?userName=someone")
        let last = try connection.readResponse()
        expectSomeone(last)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let server = try TestServer()
        let connection = try server.connect()
        let names = ["first", "second", "third"]
        try connection.send(names.flatMap { RawHTTPConnection.request("GET", "/isUserNameAvailable?userName=\($0)") })
        for name in names {
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.json?["userName"] as? String == name)
        }
    }

    /// `Connection: close`, or HTTP/1.0: the answer comes, then the close.
    @Test(arguments: [
        String(decoding: RawHTTPConnection.request("GET", "/isUserNameAvailable?userName=someone", headers: [("Connection", "close")]),
               as: UTF8.self),
        "GET /isUserNameAvailable?userName=someone HTTP/1.0\r\n\r\n",
    ])
    func connectionClosesAfterTheAnswerWhenAsked(request: String) throws {
        let server = try TestServer()
        let connection = try server.connect()
        try connection.send(request)
        expectSomeone(try connection.readResponse())
        #expect(try connection.readToEnd().isEmpty)
    }

    // MARK: Request bodies

    @Test func chunkedRequestBodyIsReadWhole() throws {
        let server = try TestServer()
        let connection = try server.connect()
        let json = #"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#
        let (first, second) = (json.prefix(20), json.dropFirst(20))
        try connection.send(
            "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + String(first.utf8.count, radix: 16) + "\r\n" + first + "\r\n"
            + String(second.utf8.count, radix: 16) + "\r\n" + second + "\r\n0\r\n\r\n")
        let response = try connection.readResponse()
        expectJohnsToken(response)
    }

    @Test func expectContinueIsAnsweredBeforeTheBody() throws {
        let server = try TestServer()
        let connection = try server.connect()
        let body = #"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#
        try connection.send(
            "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
        let interim = try connection.readResponse(toHead: true)
        #expect(interim.status == 100)

        try connection.send(body)
        let response = try connection.readResponse()
        expectJohnsToken(response)
    }

    @Test func formMediaTypeIsMatchedWithoutRegardToCase() async throws {
        // RFC 9110 section 8.3.1: media type names are case-insensitive, and the seed server
        // (Vapor's HTTPMediaType) compares them so.
        let server = try TestServer()
        let response = try await server.send("POST", "/login", body: Data("email=john%40doe.com&password=onlyjohnknowsme".utf8),
                                             headers: ["Content-Type": "Application/X-WWW-Form-URLEncoded"])
        expectJohnsToken(response)
    }

    // MARK: Body limit

    @Test func bodyOverTheLimitIsRefused() async throws {
        let server = try TestServer(configuration: ServerConfiguration(port: 0, maxBodyBytes: 1024))
        let body = Data(repeating: UInt8(ascii: "a"), count: 4096)
        let response = try await server.send("POST", "/login", body: body, headers: ["Content-Type": "application/json"])
        #expect(response.status == 413)
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.json?["error"] as? Bool == true)
        #expect(response.json?["reason"] as? String == "Request body larger than 1024 bytes")
    }

    @Test func bodyExactlyAtTheLimitIsRead() async throws {
        let server = try TestServer(configuration: ServerConfiguration(port: 0, maxBodyBytes: 1024))
        var body = Array(#"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#.utf8)
        body += [UInt8](repeating: UInt8(ascii: " "), count: 1024 - body.count)
        let response = try await server.send("POST", "/login", body: Data(body), headers: ["Content-Type": "application/json"])
        expectJohnsToken(response)
    }

    @Test func connectionStillAnswersAfterARefusedBody() throws {
        let server = try TestServer(configuration: ServerConfiguration(port: 0, maxBodyBytes: 1024))
        let connection = try server.connect()
        try connection.sendRequest("POST", "/login", headers: [("Content-Type", "application/json")],
                                   body: [UInt8](repeating: UInt8(ascii: "a"), count: 4096))
        let refused = try connection.readResponse()
        #expect(refused.status == 413)

        try connection.sendRequest("GET", "/isUserNameAvailable?userName=someone")
        let next = try connection.readResponse()
        expectSomeone(next)
    }

    // MARK: Header limit

    /// One `X-Pad` header that brings the header section (the `Host` header the raw client
    /// sends, counted as `Host: 127.0.0.1` and its CRLF, plus this one) to `total` bytes.
    private func padding(toTotal total: Int) -> (String, String) {
        let host = "Host: 127.0.0.1\r\n".utf8.count
        let overhead = "X-Pad: \r\n".utf8.count
        return ("X-Pad", String(repeating: "p", count: total - host - overhead))
    }

    @Test func headersExactlyAtTheLimitAreRead() throws {
        let server = try TestServer(configuration: ServerConfiguration(port: 0, maxHeaderBytes: 2048))
        let connection = try server.connect()
        try connection.sendRequest("GET", "/isUserNameAvailable?userName=someone", headers: [padding(toTotal: 2048)])
        let response = try connection.readResponse()
        expectSomeone(response)
    }

    @Test func headersOneByteOverTheLimitGet431AndTheConnectionGoesOn() throws {
        let server = try TestServer(configuration: ServerConfiguration(port: 0, maxHeaderBytes: 2048))
        let connection = try server.connect()
        try connection.sendRequest("GET", "/isUserNameAvailable?userName=someone", headers: [padding(toTotal: 2049)])
        let refused = try connection.readResponse()
        #expect(refused.status == 431)
        #expect(refused.header("Content-Type") == jsonContentType)
        #expect(refused.json?["reason"] as? String == "Request headers larger than 2048 bytes")

        try connection.sendRequest("GET", "/isUserNameAvailable?userName=someone")
        #expect(try connection.readResponse().status == 200)
    }

    @Test func headersFarOverTheLimitGetAWellFormed431() throws {
        // Past the connection's buffer libmicrohttpd refuses the request itself, then closes.
        let server = try TestServer()
        let connection = try server.connect()
        try connection.sendRequest("GET", "/isUserNameAvailable?userName=someone", headers: [padding(toTotal: 64 << 10)])
        let refused = try connection.readResponse()
        #expect(refused.status == 431)
    }

    @Test func aRaisedHeaderLimitAcceptsLargeHeaders() throws {
        let server = try TestServer(configuration: ServerConfiguration(port: 0, maxHeaderBytes: 64 << 10))
        let connection = try server.connect()
        try connection.sendRequest("GET", "/isUserNameAvailable?userName=someone", headers: [padding(toTotal: 60 << 10)])
        #expect(try connection.readResponse().status == 200)
    }

    // MARK: Placeholders

    @Test func userNameWithJSONSpecialCharactersRoundTrips() async throws {
        let name = "a\"b\\c\nd\"e\t</script>"
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=\(name.queryEncoded)")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == jsonContentType)
        let json = try #require(response.json, "not JSON: \(response.text)")
        #expect(json["isAvailable"] as? Bool == true)
        #expect(json["userName"] as? String == name)
    }

    @Test func userNameWithControlCharactersRoundTrips() async throws {
        let name = "x\u{01}\r\u{1F}y\u{7F}"
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=\(name.queryEncoded)")
        let json = try #require(response.json, "not JSON: \(response.text)")
        #expect(json["userName"] as? String == name)
    }
}
