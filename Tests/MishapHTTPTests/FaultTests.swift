import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import MishapTestSupport
import Testing

/// The transport faults of the failure catalogue, as a client sees them: on a raw socket, byte
/// by byte, and through URLSession, as the error code it reports.
@Suite(.onBlockingThreads) struct FaultTests {
    /// A fault trigger, the `URLError.Code` swift-corelibs-foundation reports for it, and the
    /// libcurl message it carries, as observed on Linux (Swift 6.3, libcurl underneath).
    struct ObservedFault: Sendable, CustomTestStringConvertible {
        let trigger: String
        let code: URLError.Code
        let curlMessage: String
        var testDescription: String { "\(trigger) → URLError(\(code.rawValue))" }
    }

    static let urlSessionFaults = [
        // CURLE_RECV_ERROR
        ObservedFault(trigger: "reset", code: .networkConnectionLost, curlMessage: "Recv failure: Connection reset by peer"),
        // CURLE_GOT_NOTHING
        ObservedFault(trigger: "dropped", code: .badServerResponse, curlMessage: "Empty reply from server"),
        // CURLE_UNSUPPORTED_PROTOCOL: libcurl takes bytes without a status line for HTTP/0.9 and refuses them.
        ObservedFault(trigger: "garbage", code: .unsupportedURL, curlMessage: "Received HTTP/0.9 when not allowed"),
        // CURLE_PARTIAL_FILE, which corelibs-foundation does not map: NSURLErrorUnknown.
        ObservedFault(trigger: "truncated", code: .unknown, curlMessage: "bytes remaining to read"),
        ObservedFault(trigger: "truncatedchunked", code: .unknown, curlMessage: "transfer closed with outstanding read data remaining"),
    ]

    // MARK: URLSession

    @Test(arguments: FailureEndpoint.allCases, urlSessionFaults)
    func urlSessionReportsTheFault(endpoint: FailureEndpoint, fault: ObservedFault) async throws {
        let server = try TestServer()
        let error = await urlError { try await endpoint.send(fault.trigger, to: server) }
        #expect(error?.code == fault.code, "\(fault.trigger) on \(endpoint.testDescription): \(String(describing: error))")
        #expect(error?.localizedDescription.contains(fault.curlMessage) == true, "\(String(describing: error?.localizedDescription))")
        // The server is fine afterwards.
        #expect(try await endpoint.send("someone", to: server).status != 500)
    }

    /// Observed, and a property of swift-corelibs-foundation, not of Mishap (the same exchange
    /// on a raw socket is reset or closed at once, see `rawFaultsOnAReusedConnection`): when a
    /// POST goes out on a keep-alive connection kept from an earlier request and that connection
    /// is reset or closed without a response byte, URLSession does not fail but waits out its
    /// timeout. A GET fails at once. A session of its own makes the reuse certain.
    @Test(arguments: ["reset", "dropped"])
    func urlSessionTimesOutAPostWhoseReusedConnectionBreaks(trigger: String) async throws {
        let server = try TestServer()
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        func login(_ trigger: String) async throws -> ClientResponse {
            var request = URLRequest(url: server.url("/login"))
            request.httpMethod = "POST"
            request.httpBody = Data(FailureEndpoint.loginBody(trigger))
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.timeoutInterval = 2
            let (data, response) = try await session.data(for: request)
            return ClientResponse(status: (response as! HTTPURLResponse).statusCode, headers: [:], body: data)
        }
        #expect(try await login("someone").status == 404)
        let start = ContinuousClock.now
        let error = await urlError { try await login(trigger) }
        #expect(error?.code == .timedOut, "\(String(describing: error))")
        #expect(start.duration(to: .now) >= .milliseconds(1900))

        // A GET on a reused connection fails at once.
        var get = URLRequest(url: server.url("/isUserNameAvailable?userName=someone"))
        _ = try await session.data(for: get)
        get.url = server.url("/isUserNameAvailable?userName=\(trigger)")
        get.timeoutInterval = 2
        let getError = await urlError {
            let (data, response) = try await session.data(for: get)
            return ClientResponse(status: (response as! HTTPURLResponse).statusCode, headers: [:], body: data)
        }
        #expect(getError?.code == (trigger == "reset" ? .networkConnectionLost : .badServerResponse), "\(String(describing: getError))")
    }

    @Test(arguments: FailureEndpoint.allCases, ["reset", "dropped", "garbage", "truncated", "truncatedchunked", "lengthmismatch"])
    func rawFaultsOnAReusedConnection(endpoint: FailureEndpoint, trigger: String) throws {
        // A fault after an answered request on the same keep-alive connection breaks it just the same.
        let server = try TestServer()
        let connection = try server.connect(timeoutSeconds: 5)
        switch endpoint {
        case .userName: try connection.sendRequest("GET", "/isUserNameAvailable?userName=someone")
        case .login: try connection.sendRequest("POST", "/login", headers: [("Content-Type", "application/json")],
                                                body: FailureEndpoint.loginBody("someone"))
        }
        #expect(try connection.readResponse().status == (endpoint == .userName ? 200 : 404))
        try endpoint.sendRaw(trigger, on: connection)
        let (bytes, end) = try connection.readUntilEnd()
        switch trigger {
        case "reset":
            #expect(bytes.isEmpty)
            #expect(end == .failed(errno: ECONNRESET), "\(end)")
        case "dropped":
            #expect(bytes.isEmpty)
            #expect(end == .closed, "\(end)")
        case "garbage":
            #expect(bytes.count == 64)
            #expect(end == .closed, "\(end)")
        default:
            #expect(bytes.starts(with: Array("HTTP/1.1 200".utf8)))
            #expect(end == .closed, "\(end)")
        }
    }

    @Test(arguments: FailureEndpoint.allCases)
    func urlSessionAcceptsALengthMismatchAsAShortBody(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("lengthmismatch", to: server)
        let intended = endpoint.intendedBody("lengthmismatch")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(Int(response.header("Content-Length") ?? "") == intended.count / 2)
        #expect(Array(response.body) == Array(intended.prefix(intended.count / 2)), "\(response.text)")
    }

    // MARK: Raw sockets

    /// Sends `trigger` on a fresh raw connection; everything received, and how the stream ended.
    func exchange(_ trigger: String, _ endpoint: FailureEndpoint, on server: TestServer)
        throws -> (bytes: [UInt8], end: RawHTTPConnection.Received) {
        let connection = try server.connect(timeoutSeconds: 5)
        try endpoint.sendRaw(trigger, on: connection)
        return try connection.readUntilEnd()
    }

    /// The server keeps answering after a fault.
    func expectStillServing(_ server: TestServer, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let response = try server.sendRaw("GET", "/isUserNameAvailable?userName=someone")
        #expect(response.status == 200, sourceLocation: sourceLocation)
        #expect(response.json?["userName"] as? String == "someone", sourceLocation: sourceLocation)
    }

    @Test(arguments: FailureEndpoint.allCases)
    func resetIsAConnectionResetNotAnEOF(endpoint: FailureEndpoint) throws {
        let server = try TestServer()
        let (bytes, end) = try exchange("reset", endpoint, on: server)
        #expect(bytes.isEmpty, "\(bytes.count) bytes before the reset")
        #expect(end == .failed(errno: ECONNRESET), "the stream ended with \(end), not ECONNRESET")
        try expectStillServing(server)
    }

    @Test(arguments: FailureEndpoint.allCases)
    func droppedIsACleanCloseWithoutAByte(endpoint: FailureEndpoint) throws {
        let server = try TestServer()
        let (bytes, end) = try exchange("dropped", endpoint, on: server)
        #expect(bytes.isEmpty, "\(bytes.count) bytes: \(String(decoding: bytes, as: UTF8.self))")
        #expect(end == .closed, "the stream ended with \(end), not EOF")
        try expectStillServing(server)
    }

    @Test(arguments: FailureEndpoint.allCases)
    func garbageIsBytesThatAreNotHTTPThenAClose(endpoint: FailureEndpoint) throws {
        let server = try TestServer()
        let (bytes, end) = try exchange("garbage", endpoint, on: server)
        #expect(bytes.count == 64, "\(bytes.count) bytes")
        #expect(!bytes.starts(with: Array("HTTP/".utf8)))
        #expect(!bytes.starts(with: Array("H".utf8)))
        #expect(end == .closed, "the stream ended with \(end), not EOF")
        // Random: a second request gets other bytes.
        let (again, _) = try exchange("garbage", endpoint, on: server)
        #expect(again.count == 64)
        #expect(again != bytes)
        try expectStillServing(server)
    }

    /// Sends `trigger` on a raw connection of a server of its own: the answer starts as a 200,
    /// the server closes the connection after it and goes on serving. `check` looks at the head
    /// and the bytes after it, given the body the fault spoils.
    func expectSpoiledAnswer(_ trigger: String, _ endpoint: FailureEndpoint, sourceLocation: SourceLocation = #_sourceLocation,
                             _ check: (_ head: ClientResponse, _ rest: [UInt8], _ intended: [UInt8]) throws -> Void) throws {
        let server = try TestServer()
        let (head, rest, end) = try endpoint.rawAnswer(trigger, on: server)
        #expect(head.status == 200, sourceLocation: sourceLocation)
        try check(head, rest, endpoint.intendedBody(trigger))
        #expect(end == .closed, "the stream ended with \(end), not EOF", sourceLocation: sourceLocation)
        try expectStillServing(server, sourceLocation: sourceLocation)
    }

    @Test(arguments: FailureEndpoint.allCases)
    func truncatedPromisesMoreThanItSends(endpoint: FailureEndpoint) throws {
        try expectSpoiledAnswer("truncated", endpoint) { head, body, intended in
            #expect(head.header("Transfer-Encoding") == nil)
            #expect(head.header("Content-Type") == jsonContentType)
            let declared = try #require(head.header("Content-Length").flatMap { Int($0) }, "no Content-Length: \(head.headers)")
            #expect(declared == intended.count)
            #expect(body.count < declared, "\(body.count) of \(declared) bytes sent")
            #expect(!body.isEmpty)
            #expect(intended.starts(with: body), "not a prefix of the intended body: \(String(decoding: body, as: UTF8.self))")
        }
    }

    @Test(arguments: FailureEndpoint.allCases)
    func truncatedChunkedStopsWithoutTheLastChunk(endpoint: FailureEndpoint) throws {
        try expectSpoiledAnswer("truncatedchunked", endpoint) { head, rest, intended in
            let chunked = ChunkedBody(rest)
            #expect(head.header("Transfer-Encoding")?.lowercased() == "chunked", "\(head.headers)")
            #expect(head.header("Content-Length") == nil)
            #expect(!chunked.terminated, "the terminating chunk was sent: \(String(decoding: rest, as: UTF8.self))")
            #expect(rest.firstRange(of: Array("0\r\n\r\n".utf8)) == nil)
            #expect(!chunked.payload.isEmpty)
            #expect(chunked.payload.count < intended.count)
            #expect(intended.starts(with: chunked.payload), "\(String(decoding: chunked.payload, as: UTF8.self))")
        }
    }

    @Test(arguments: FailureEndpoint.allCases)
    func lengthMismatchSendsMoreThanContentLength(endpoint: FailureEndpoint) throws {
        try expectSpoiledAnswer("lengthmismatch", endpoint) { head, body, intended in
            #expect(head.header("Transfer-Encoding") == nil)
            let declared = try #require(head.header("Content-Length").flatMap { Int($0) }, "no Content-Length: \(head.headers)")
            #expect(declared < body.count, "Content-Length \(declared), \(body.count) bytes followed")
            #expect(body == intended, "\(String(decoding: body, as: UTF8.self))")
        }
    }

    @Test(arguments: FailureEndpoint.allCases)
    func forcedFaultOnAnOrdinaryName(endpoint: FailureEndpoint) throws {
        // X-Mishap-Rule drives a request that cannot choose its input into a fault, a login's
        // body as much as a query.
        let server = try TestServer()
        let connection = try server.connect(timeoutSeconds: 5)
        try endpoint.sendRaw("someone", on: connection, headers: [("X-Mishap-Rule", "reset")])
        let (pieces, end) = try connection.readPiecesToEnd()
        #expect(pieces.isEmpty)
        #expect(end == .failed(errno: ECONNRESET), "\(end)")
    }

    @Test func inlineGarbageSendsTheDeclaredBody() throws {
        let server = try TestServer(yaml: """
            endpoint: GET /g
            rules:
              - name: g
                respond: { fault: garbage, text: "not http at all" }
            """)
        let connection = try server.connect(timeoutSeconds: 5)
        try connection.sendRequest("GET", "/g")
        let (pieces, end) = try connection.readPiecesToEnd()
        #expect(String(decoding: pieces.flatMap(\.bytes), as: UTF8.self) == "not http at all")
        #expect(end == .closed, "\(end)")
    }
}
