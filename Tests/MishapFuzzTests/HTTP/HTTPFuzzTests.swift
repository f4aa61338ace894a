import Foundation
import Logging
import MishapHTTP
import MishapTestSupport
import Testing

/// Malformed and mutated HTTP sent over raw sockets to a real server: broken request lines,
/// oversized and broken headers, bad framing, invalid encodings, pipelining at random byte
/// boundaries, half-closes, resets and trickles. Every byte the server sends back must be
/// well-formed HTTP/1.x (or nothing before a clean close), request values echoed in headers
/// must never add a header, echoed JSON must stay valid, and afterwards the server must still
/// answer correctly with no connection left open.
///
/// The cases come from a seeded generator: `MISHAP_FUZZ_SEED` picks the seed (default fixed),
/// `MISHAP_FUZZ_CASES` their number, `MISHAP_FUZZ_CASE` runs one case alone. A failure names
/// the seed and the case.
@Suite(.onBlockingThreads) struct HTTPFuzzTests {
    static let yaml = """
        endpoints:
          - endpoint: GET /echo
            rules:
              - name: maintenance
                when: { query: { mode: cycle } }
                cycle:
                  - { status: 503, headers: { Retry-After: "1", X-Echo: "{{query.name}}" }, json: { step: 1, name: "{{query.name}}" } }
                  - pass
              - name: slow
                when: { query: { mode: slow } }
                respond: { delay: 3, headers: { X-Echo: "{{query.name}}" }, json: { slow: true, name: "{{query.name}}" } }
              - name: echo
                respond:
                  headers: { X-Echo: "{{query.name}}", X-Thing-Echo: "{{headers.X-Thing}}" }
                  json: { name: "{{query.name}}", thing: "{{headers.X-Thing}}", method: "{{request.method}}", path: "{{request.path}}" }
          - endpoint: POST /submit
            rules:
              - name: malformed
                when: { malformedBody: true }
                respond: { status: 400, json: { error: true, reason: "Malformed request body." } }
              - name: vip
                when: { body: { kind: vip, field: { minLength: 1 } } }
                respond: { status: 201, headers: { X-Field: "{{body.field}}" }, json: { field: "{{body.field}}", kind: "{{body.kind}}" } }
              - name: accepted
                respond: { status: 202, headers: { X-Field: "{{body.field}}" }, json: { field: "{{body.field}}", nested: "{{body.user.name}}" } }
          - endpoint: ANY /items/{id}
            rules:
              - name: item
                respond: { headers: { X-Id: "{{path.id}}" }, json: { id: "{{path.id}}", method: "{{request.method}}" } }
          - endpoint: GET /static/*
            rules:
              - name: text
                respond: { text: "plain {{query.name}}" }
        """

    /// Small limits, so the fuzz reaches them: 64 KiB bodies, 8 KiB headers, 2 s idle timeout.
    static let configuration = ServerConfiguration(port: 0, threads: 2, maxBodyBytes: 64 << 10, maxHeaderBytes: 8 << 10,
                                                   connectionLimit: 256, connectionTimeoutSeconds: 2)

    static let defaultSeed: UInt64 = 0x4D15_4A50
    static let defaultCases = 4000
    static let workers = 4

    @Test(.timeLimit(.minutes(3)))
    func malformedAndMutatedHTTP() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["MISHAP_FUZZ_SEED"].flatMap { UInt64($0) } ?? Self.defaultSeed
        let only = environment["MISHAP_FUZZ_CASE"].flatMap { Int($0) }
        let count = environment["MISHAP_FUZZ_CASES"].flatMap { Int($0) } ?? Self.defaultCases

        let daemonLog = DaemonLog()
        let server = try Self.startServer(logger: daemonLog.logger)
        defer { server.instance.stop() }
        let port = server.port

        // The answer a plain request gets, before and after the fuzz.
        let expectedBody = #"{"name":"final","thing":"","method":"GET","path":"/echo"}"#
        try expectPlainAnswer(port: port, body: expectedBody)
        #expect(await eventually { openServerConnections(port: port) == 0 })
        let descriptorsBefore = openDescriptorCount()

        let board = FuzzBoard(seed: seed)
        let started = ContinuousClock.now
        let indices = only.map { [$0] } ?? Array(0..<count)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<Self.workers {
                group.addTask {
                    try await onOwnThread {
                        for index in indices where index % Self.workers == worker {
                            var random = SeededRandom(seed: seed, case: index)
                            let fuzzCase = FuzzCases.make(&random)
                            let outcome = FuzzRunner.run(fuzzCase, port: port)
                            board.record(index: index, fuzzCase, outcome)
                            if only != nil {
                                print("case \(index) (\(fuzzCase.kind), \(fuzzCase.ending), \(fuzzCase.pieces.count) pieces) in \(outcome.elapsed)\n"
                                    + "  sent: \(printable(fuzzCase.bytes, limit: 4000))\n  got (\(outcome.end)): \(printable(outcome.received, limit: 4000))")
                            }
                        }
                    }
                }
            }
            if only == nil {
                for trickler in 0..<SlowClients.count {
                    group.addTask { try await onOwnThread { SlowClients.run(trickler, seed: seed, port: port, board: board) } }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - started

        // Every connection closes: ours are all closed, so the server's side must follow
        // (within its idle timeout at worst).
        let drained = await eventually(within: .seconds(Self.configuration.connectionTimeoutSeconds + 8)) {
            openServerConnections(port: port) == 0 && server.instance.requestsInFlight == 0
        }
        #expect(drained, "server connections still open: \(openServerConnections(port: port)), requests in flight: \(server.instance.requestsInFlight)")
        let descriptorsAfter = openDescriptorCount()

        try expectPlainAnswer(port: port, body: expectedBody)
        try expectJournal(port: port)

        let summary = board.summary(cases: indices.count, elapsed: elapsed, descriptors: (descriptorsBefore, descriptorsAfter))
            + "\n  libmicrohttpd said: " + daemonLog.counts.sorted { $0.value > $1.value }
                .map { "\($0.value)× \($0.key)" }.joined(separator: "\n    ")
        print(summary)
        // The scenario has no fault rules, so the responder never refuses a request: when
        // libmicrohttpd reports the application failing one, Mishap's handler returned NO
        // where it should have answered (the connection was closed without a response).
        #expect(daemonLog.count(containing: "Application reported internal error") == 0, "\(daemonLog.counts)")
        let failures = board.failures
        let report = failures.prefix(25).joined(separator: "\n")
        let allPassed = failures.isEmpty
        // The failures come last: a log shown by its tail still shows them.
        #expect(allPassed, """
            \(summary)
            \(failures.count) failing fuzz cases (seed \(seed)); rerun one with MISHAP_FUZZ_SEED=\(seed) MISHAP_FUZZ_CASE=N:
            \(report)
            """)
    }

    /// `GET /echo?name=final` on a fresh connection answers exactly `body`.
    private func expectPlainAnswer(port: UInt16, body: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (responses, problem) = try Self.exchange(port: port, "GET /echo?name=final HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(problem == nil, "\(problem ?? "")", sourceLocation: sourceLocation)
        let response = try #require(responses.first, sourceLocation: sourceLocation)
        #expect(response.status == 200, sourceLocation: sourceLocation)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8", sourceLocation: sourceLocation)
        #expect(response.text == body, sourceLocation: sourceLocation)
        #expect(response.header("X-Echo") == "final", sourceLocation: sourceLocation)
    }

    /// The journal answers valid JSON after the fuzz, whatever the fuzzed requests held.
    private func expectJournal(port: UInt16, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (responses, problem) = try Self.exchange(port: port, "GET /__mishap/requests HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(problem == nil, "\(problem ?? "")", sourceLocation: sourceLocation)
        let response = try #require(responses.first, sourceLocation: sourceLocation)
        #expect(response.status == 200, sourceLocation: sourceLocation)
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        let entries = try #require(object?["requests"] as? [[String: Any]], "not a journal: \(printable(response.body))",
                                   sourceLocation: sourceLocation)
        // The last one is the plain request just answered (a fuzzed reset may have cleared the rest).
        let last = try #require(entries.last, sourceLocation: sourceLocation)
        #expect(last["path"] as? String == "/echo" && pairs(last["query"]) == [["name", "final"]], "\(last)",
                sourceLocation: sourceLocation)
    }

    /// A request announcing `Expect: 100-continue` without a body, with the next request
    /// already sent behind it: both are answered, after the interim 100 (libmicrohttpd 0.9.75
    /// hands the handler an empty piece of body there, which is not the end of the request).
    @Test(.timeLimit(.minutes(1)))
    func expectContinueWithoutABodyThenAPipelinedRequest() throws {
        let server = try Self.startServer()
        defer { server.instance.stop() }
        for first in ["POST /submit", "GET /echo?name=first"] {
            let socket = try FuzzRunner.connect(port: server.port)
            defer { socket.close() }
            let requests = "\(first) HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n\r\n"
                + "GET /echo?name=second HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            #expect(socket.write(Array(requests.utf8)) == nil)
            var received: [UInt8] = []
            let end = socket.read(into: &received, until: .now + .seconds(5)) { WireReader.read($0, atEnd: false).finalCount >= 2 }
            let stream = WireReader.read(received, atEnd: end != .satisfied)
            let finals = stream.responses.filter { !$0.isInterim }
            #expect(end == .satisfied && stream.problem == nil, "\(first): \(end), \(printable(received))")
            #expect(finals.map(\.status) == [first.hasPrefix("POST") ? 202 : 200, 200], "\(first): \(printable(received))")
            #expect(finals.last.flatMap(jsonObject)?["name"] as? String == "second")
        }
    }

    // MARK: libmicrohttpd 0.9.75 defects
    //
    // Found by the fuzz, in libmicrohttpd's own parsing, before Mishap's handler is called: kept
    // as known issues, so a fix (a newer libmicrohttpd, or a workaround in the bridge through
    // its URI log callback) shows up as these issues no longer being recorded.

    /// A request refused while libmicrohttpd parses its headers gets its refusal's head twice:
    /// an unparsable `Content-Length` (400), one past 64 bits (413), more cookies than the
    /// connection's memory pool holds (431).
    @Test(.timeLimit(.minutes(1)), arguments: HeaderRefusal.allCases)
    func aRequestRefusedWhileParsingHeadersGetsOneWellFormedAnswer(refusal: HeaderRefusal) throws {
        let server = try Self.startServer()
        defer { server.instance.stop() }
        let socket = try FuzzRunner.connect(port: server.port)
        defer { socket.close() }
        #expect(socket.write(Array("POST /submit HTTP/1.1\r\nHost: 127.0.0.1\r\n\(refusal.header)\r\n\r\n".utf8)) == nil)
        var received: [UInt8] = []
        let end = socket.read(into: &received, until: .now + .seconds(6))
        let stream = WireReader.read(received, atEnd: true)
        #expect(end == .closed || end == .reset)
        #expect(FuzzRunner.withoutDoubledErrorHead(received) != nil, "not the doubled head: \(printable(received))")
        withKnownIssue("libmicrohttpd 0.9.75 writes the head of this refusal twice") {
            #expect(stream.problem == nil && stream.leftover.isEmpty && stream.finalCount == 1, "\(printable(received))")
        }
    }

    enum HeaderRefusal: String, CaseIterable, Sendable {
        case lettersForALength, negativeLength, lengthPast64Bits, nineHundredCookies

        var header: String {
            switch self {
            case .lettersForALength: return "Content-Length: abc"
            case .negativeLength: return "Content-Length: -1"
            case .lengthPast64Bits: return "Content-Length: 99999999999999999999999"
            case .nineHundredCookies: return "Cookie: " + (0..<900).map { "c\($0)=v" }.joined(separator: "; ")
            }
        }
    }

    /// A request with several hundred query parameters: libmicrohttpd runs out of the
    /// connection's memory pool (24 KiB at the 8 KiB header limit) storing them, queues a 431
    /// it never sends, and holds the connection until the idle timeout, without an answer.
    @Test(.timeLimit(.minutes(1)))
    func aRequestWithManyQueryParametersGetsAnAnswer() throws {
        let server = try Self.startServer()
        defer { server.instance.stop() }
        let socket = try FuzzRunner.connect(port: server.port)
        defer { socket.close() }
        let query = (0..<600).map { "p\($0)=\($0)" }.joined(separator: "&")
        #expect(socket.write(Array("GET /echo?name=many&\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)) == nil)
        var received: [UInt8] = []
        let started = ContinuousClock.now
        let end = socket.read(into: &received, until: .now + .seconds(8)) { WireReader.read($0, atEnd: false).finalCount >= 1 }
        let stream = WireReader.read(received, atEnd: end != .satisfied)
        #expect(stream.problem == nil, "\(printable(received))")
        withKnownIssue("libmicrohttpd 0.9.75 closes at the idle timeout without answering") {
            #expect(end == .satisfied && stream.finalCount == 1, "\(end) after \(ContinuousClock.now - started): \(printable(received))")
        }
    }

    /// A server for one test, with the scenario and small limits above.
    static func startServer(logger: Logger = quietLogger) throws -> TestServer {
        try TestServer(yaml: yaml, name: "fuzz.yaml", configuration: configuration, logger: logger)
    }

    /// The checker itself: it reads well-formed responses and rejects what a client could
    /// misread, so a server that sent such bytes would fail the fuzz.
    @Test func theReaderRejectsWhatIsNotHTTP() {
        func read(_ text: String, atEnd: Bool = true, head: Bool = false) -> WireReader.Stream {
            WireReader.read(Array(text.utf8), atEnd: atEnd, isHead: { _ in head })
        }
        let plain = read("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
        #expect(plain.problem == nil && plain.leftover.isEmpty && plain.responses.first?.text == "hi")
        let chunked = read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nhi\r\n1\r\n!\r\n0\r\nX-Trailer: 1\r\n\r\n")
        #expect(chunked.problem == nil && chunked.leftover.isEmpty && chunked.responses.first?.text == "hi!")
        let interim = read("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
        #expect(interim.problem == nil && interim.responses.count == 2 && interim.finalCount == 1)
        let head = read("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", head: true)
        #expect(head.problem == nil && head.finalCount == 1 && head.leftover.isEmpty)
        let untilClose = read("HTTP/1.0 200 OK\r\n\r\nrest of the stream")
        #expect(untilClose.problem == nil && untilClose.responses.first?.text == "rest of the stream")

        for broken in [
            "HTTP/1.1 200 OK\nContent-Length: 0\n\n",                          // bare LF line ends
            "HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n",                         // a header line without a colon
            "HTTP/1.1 200 OK\r\nX-A: a\u{1}b\r\nContent-Length: 0\r\n\r\n",    // a control character in a value
            "HTTP/1.1 200 OK\r\nX-A: a\rX-Injected: yes\r\n\r\n",              // a bare CR in a value
            "HTTP/1.1 200 OK\r\nX-A: a\r\n folded\r\nContent-Length: 0\r\n\r\n", // obs-fold
            "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n",                      // a two-digit status
            "garbage, not HTTP",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n",
        ] {
            #expect(read(broken).problem != nil, "accepted: \(broken.debugDescription)")
        }
        let cut = read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort")
        #expect(cut.problem == nil && cut.finalCount == 0 && !cut.leftover.isEmpty)

        let body = "<html><head><title>Bad</title></head></html>"
        let doubledHead = "HTTP/1.1 400 Bad Request\r\nDate: Sat, 21 Nov 2026 10:12:45 GMT\r\nConnection: close\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n"
        let rest = FuzzRunner.withoutDoubledErrorHead(Array((doubledHead + doubledHead + body).utf8))
        #expect(rest.map { String(decoding: $0, as: UTF8.self) } == doubledHead + body)
        #expect(rest.map { WireReader.read($0, atEnd: true) }.map { $0.problem == nil && $0.finalCount == 1 } == true)
        #expect(FuzzRunner.withoutDoubledErrorHead(Array((doubledHead + body).utf8)) == nil)
    }

    /// One request on its own connection; the complete responses read until the first final one.
    static func exchange(port: UInt16, _ request: String) throws -> ([WireResponse], String?) {
        let socket = try FuzzRunner.connect(port: port)
        defer { socket.close() }
        if let code = socket.write(Array(request.utf8)) { return ([], "send failed: errno \(code)") }
        var received: [UInt8] = []
        let end = socket.read(into: &received, until: .now + .seconds(10)) {
            WireReader.read($0, atEnd: false).finalCount >= 1
        }
        let stream = WireReader.read(received, atEnd: end != .satisfied)
        let problem = stream.problem ?? (stream.finalCount == 0 ? "no response (\(end)): \(printable(received))" : nil)
        return (stream.responses.filter { !$0.isInterim }, problem)
    }
}
