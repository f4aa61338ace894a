import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import MishapFuzzSupport
import MishapHTTP
import MishapService
import Synchronization
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
@Suite struct HTTPFuzzTests {
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
        defer { server.stop() }
        let port = try #require(server.port)

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
            openServerConnections(port: port) == 0 && server.requestsInFlight == 0
        }
        #expect(drained, "server connections still open: \(openServerConnections(port: port)), requests in flight: \(server.requestsInFlight)")
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
        #expect(allPassed, """
            \(failures.count) failing fuzz cases (seed \(seed)); rerun one with MISHAP_FUZZ_SEED=\(seed) MISHAP_FUZZ_CASE=N:
            \(report)
            \(summary)
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
        defer { server.stop() }
        for first in ["POST /submit", "GET /echo?name=first"] {
            let socket = try FuzzSocket(port: try #require(server.port))
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
        defer { server.stop() }
        let socket = try FuzzSocket(port: try #require(server.port))
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

    /// A request with a few hundred query parameters: libmicrohttpd runs out of the
    /// connection's memory pool (12 KiB at the 8 KiB header limit) storing them, queues a 431
    /// it never sends, and holds the connection until the idle timeout, without an answer.
    @Test(.timeLimit(.minutes(1)))
    func aRequestWithManyQueryParametersGetsAnAnswer() throws {
        let server = try Self.startServer()
        defer { server.stop() }
        let socket = try FuzzSocket(port: try #require(server.port))
        defer { socket.close() }
        let query = (0..<300).map { "p\($0)=\($0)" }.joined(separator: "&")
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
    static func startServer(logger: Logger = quietLogger) throws -> HTTPServer {
        let service = try MishapService(source: .yaml(yaml, name: "fuzz.yaml"), options: ServiceOptions(), logger: quietLogger)
        let server = HTTPServer(configuration: configuration, responder: service, observer: service, logger: logger)
        try server.start()
        return server
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
        let socket = try FuzzSocket(port: port)
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

// MARK: - Cases

/// What one final response must be, when the request is known to be valid.
struct ExpectedResponse {
    var statuses: Set<Int>
    var method = "GET"
    /// A problem with the response, or nil.
    var check: (WireResponse) -> String? = { _ in nil }
}

/// One fuzz case: bytes to send on a new connection, in pieces, and how to end.
struct FuzzCase {
    enum Ending {
        /// Read until the expected responses arrive (or the server closes).
        case awaitResponses
        /// Half-close (SHUT_WR) once the server has gone quiet, then read until it closes.
        case halfClose
        /// Read for a moment without closing (the server may close by itself), then half-close.
        case readThenHalfClose(milliseconds: Int)
        /// Reset the connection right after sending (SO_LINGER 0); nothing is read.
        case abort
    }

    var kind: String
    var pieces: [[UInt8]]
    /// Pause between pieces.
    var pauseMicroseconds = 0
    var ending: Ending
    /// The responses, in order, when every request is valid; nil when the outcome is open.
    var expected: [ExpectedResponse]?

    var bytes: [UInt8] { pieces.flatMap { $0 } }
}

/// The generators. Each case is drawn from its own `SeededRandom`, so it can be rebuilt alone.
enum FuzzCases {
    static func make(_ random: inout SeededRandom) -> FuzzCase {
        let kind = random.weighted([
            (13, "echo"), (9, "submit"), (5, "item"), (3, "static"), (3, "admin"), (2, "http10"),
            (8, "pipelined"), (3, "headersOverLimit"), (3, "bodyOverLimit"),
            (10, "requestLine"), (8, "headerJunk"), (6, "contentLength"), (7, "chunked"), (5, "encoding"),
            (15, "mutation"), (3, "abort"),
        ])
        switch kind {
        case "echo", "submit", "item", "static", "admin", "http10":
            let (bytes, expected) = valid(kind, &random)
            return known(kind, bytes, [expected], &random)
        case "pipelined":
            var bytes: [UInt8] = []
            var expected: [ExpectedResponse] = []
            for _ in 0..<random.int(2...10) {
                let (one, expectation) = valid(random.pick(["echo", "echo", "submit", "item", "static", "head"]), &random, small: true)
                bytes += one
                expected.append(expectation)
            }
            var fuzzCase = known(kind, bytes, expected, &random)
            fuzzCase.pieces = split(bytes, into: random.int(1...8), &random)
            return fuzzCase
        case "headersOverLimit": return headersOverLimit(&random)
        case "bodyOverLimit": return bodyOverLimit(&random)
        case "requestLine": return looselyChecked(kind, requestLine(&random), &random)
        case "headerJunk": return looselyChecked(kind, headerJunk(&random), &random)
        case "contentLength": return looselyChecked(kind, contentLength(&random), &random)
        case "chunked": return looselyChecked(kind, chunked(&random), &random)
        case "encoding": return looselyChecked(kind, encoding(&random), &random)
        case "mutation":
            let base = valid(random.pick(["echo", "submit", "item", "static", "admin"]), &random, small: true).0
            let followed = random.chance(0.3) ? base + valid("echo", &random, small: true).0 : base
            return looselyChecked(kind, mutate(followed, &random), &random)
        default: return abort(&random)
        }
    }

    /// A case whose responses are known; mostly read to the end, sometimes half-closed early.
    private static func known(_ kind: String, _ bytes: [UInt8], _ expected: [ExpectedResponse], _ random: inout SeededRandom) -> FuzzCase {
        var fuzzCase = FuzzCase(kind: kind, pieces: [bytes], ending: random.chance(0.2) ? .halfClose : .awaitResponses, expected: expected)
        if random.chance(0.25) {
            fuzzCase.pieces = split(bytes, into: random.int(2...6), &random)
            fuzzCase.pauseMicroseconds = random.int(0...300)
        }
        return fuzzCase
    }

    /// A case whose outcome is open: only well-formedness and the general rules are checked.
    private static func looselyChecked(_ kind: String, _ bytes: [UInt8], _ random: inout SeededRandom) -> FuzzCase {
        var fuzzCase = FuzzCase(kind: kind, pieces: [bytes], ending: .halfClose)
        if random.chance(0.3) {
            fuzzCase.pieces = split(bytes, into: random.int(2...6), &random)
            fuzzCase.pauseMicroseconds = random.int(0...300)
        }
        if random.chance(0.05) { fuzzCase.ending = .readThenHalfClose(milliseconds: 150) }
        return fuzzCase
    }

    /// `bytes` cut at random places into about `count` pieces.
    static func split(_ bytes: [UInt8], into count: Int, _ random: inout SeededRandom) -> [[UInt8]] {
        guard count > 1, bytes.count > 1 else { return [bytes] }
        let cuts = Set((1..<count).map { _ in random.int(1...bytes.count - 1) }).sorted()
        var pieces: [[UInt8]] = []
        var start = 0
        for cut in cuts {
            pieces.append(Array(bytes[start..<cut]))
            start = cut
        }
        pieces.append(Array(bytes[start...]))
        return pieces
    }

    // MARK: Building blocks

    static func request(_ method: String, _ target: [UInt8], version: String = "HTTP/1.1", host: Bool = true,
                        headers: [[UInt8]] = [], body: [UInt8]? = nil) -> [UInt8] {
        var bytes = Array(method.utf8) + [0x20] + target + [0x20] + Array(version.utf8) + crlf
        if host { bytes += Array("Host: 127.0.0.1".utf8) + crlf }
        for header in headers { bytes += header + crlf }
        if let body { bytes += Array("Content-Length: \(body.count)".utf8) + crlf }
        return bytes + crlf + (body ?? [])
    }

    static let crlf: [UInt8] = [0x0D, 0x0A]

    /// Pieces of request values that tend to break things: quotes, backslashes, control
    /// characters, CRLF with a header after it, template syntax, percent signs, non-ASCII text
    /// and invalid UTF-8 (a lone continuation byte, overlong forms, a surrogate, beyond U+10FFFF).
    static let fragments: [[UInt8]] = [
        "\"", "\\", "\\\"", "\\u0000", "'", "</script>", "{{query.name}}", "{{", "}}", "%", "%G1", "%00", "%C3%28",
        "&", "=", "+", "#", "?", "/", ";", ",", " ", "\t", "\r\n", "\r\nX-Injected: yes", "\nX-Injected: yes",
        "\rX-Injected: yes", "\r\n\r\nX-Injected: yes", "é", "👨‍👩‍👧", "\u{2028}", "\u{FEFF}", "\u{10FFFF}", "日本",
    ].map { Array($0.utf8) } + [
        [0x00], [0x01], [0x08], [0x0B], [0x0C], [0x1B], [0x1F], [0x7F],
        [0xC3, 0x28], [0xFF], [0xFE], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0x80], [0xE2, 0x82],
        [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80],
    ]

    static func word(_ random: inout SeededRandom, _ length: ClosedRange<Int> = 1...8) -> [UInt8] {
        (0..<random.int(length)).map { _ in random.pick(Array("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789".utf8)) }
    }

    /// A request value: words and hostile fragments, sometimes empty.
    static func nasty(_ random: inout SeededRandom) -> [UInt8] {
        if random.chance(0.05) { return [] }
        var bytes: [UInt8] = []
        for _ in 0..<random.int(1...6) {
            bytes += random.chance(0.6) ? random.pick(fragments) : word(&random)
        }
        return bytes
    }

    /// Percent-encoding of every byte but the unreserved ones, in either hex case.
    static func encoded(_ bytes: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        let digits = random.chance(0.5) ? Array("0123456789ABCDEF".utf8) : Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            }
        }
        return out
    }

    /// A header value the server keeps as sent: visible ASCII, non-ASCII bytes (valid or not)
    /// and inner spaces or tabs; CRLF spelled out as text.
    static func headerValue(_ random: inout SeededRandom) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<random.int(1...5) {
            let letters = word(&random)
            bytes += random.weighted([
                (4, letters), (1, Array("a%0d%0aX-Injected:%20yes".utf8)), (1, Array("\"\\\"".utf8)),
                (1, Array("é👨‍👩‍👧".utf8)), (1, [0xFF, 0xC3, 0x28]), (1, [0x20]), (1, [0x09]), (1, Array("{{headers.X-Thing}}".utf8)),
            ])
        }
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        return bytes.isEmpty ? Array("v".utf8) : bytes
    }

    /// How a request value comes back in a response header: control characters but HTAB
    /// removed, spaces and tabs at either end trimmed (as the reader trims them).
    static func headerForm(_ text: String) -> String {
        let kept = text.utf8.filter { ($0 >= 0x20 && $0 != 0x7F) || $0 == 0x09 }
        return String(decoding: kept, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
    }

    /// Whether a string read back from JSON is `expected`. swift-corelibs-foundation's
    /// JSONSerialization drops U+FEFF from strings (the bytes on the wire keep it), so it is
    /// left out of the comparison.
    static func same(_ value: Any?, _ expected: String) -> Bool {
        guard let value = value as? String else { return false }
        return value.replacing("\u{FEFF}", with: "") == expected.replacing("\u{FEFF}", with: "")
    }

    /// A problem when `response` does not echo `text` in header `name`. libmicrohttpd leaves
    /// out a header whose value is empty, so absent equals empty.
    static func echoProblem(_ response: WireResponse, _ name: String, _ text: String) -> String? {
        let expected = headerForm(text)
        let actual = response.header(name) ?? ""
        return actual == expected ? nil : "\(name) \(actual.debugDescription) is not \(expected.debugDescription)"
    }

    // MARK: Valid requests

    /// A valid request of `kind` and what it must be answered.
    static func valid(_ kind: String, _ random: inout SeededRandom, small: Bool = false) -> ([UInt8], ExpectedResponse) {
        switch kind {
        case "echo", "head": return echo(&random, head: kind == "head")
        case "submit": return submit(&random, small: small)
        case "item": return item(&random)
        case "static": return staticText(&random)
        case "admin": return admin(&random)
        default: return http10(&random)
        }
    }

    private static func echo(_ random: inout SeededRandom, head: Bool) -> ([UInt8], ExpectedResponse) {
        let value = nasty(&random)
        let name = String(decoding: value, as: UTF8.self)
        let mode = random.weighted([(8, ""), (1, "cycle"), (1, "slow")])
        var target = Array("/echo?".utf8)
        var parameters = [Array("name=".utf8) + encoded(value, &random)]
        if !mode.isEmpty { parameters.append(Array("mode=\(mode)".utf8)) }
        if random.chance(0.2) { parameters.append(Array("other=%G1%zz%".utf8)) }
        if random.chance(0.2) { parameters.append(Array("flag".utf8)) }
        if random.chance(0.3) { parameters.shuffle(using: &random) }
        target += Array(parameters.joined(separator: [UInt8(ascii: "&")]))
        var headers: [[UInt8]] = []
        var thing = ""
        if random.chance(0.6) {
            let value = headerValue(&random)
            thing = String(decoding: value, as: UTF8.self)
            headers.append(Array(random.pick(["X-Thing", "x-thing", "X-THING"]).utf8) + Array(": ".utf8) + value)
        }
        if random.chance(0.3) { headers.append(Array("Accept: application/json".utf8)) }
        if random.chance(0.1) { headers.append(Array("Connection: keep-alive".utf8)) }
        if random.chance(0.1) { headers.append(Array("Expect: 100-continue".utf8)) }
        headers.shuffle(using: &random)
        let method = head ? "HEAD" : "GET"
        let expected = ExpectedResponse(statuses: mode == "cycle" ? [503, 200] : [200], method: method) { response in
            if head {
                return response.body.isEmpty && response.has("Content-Length") ? nil : "HEAD answered with a body or without a length"
            }
            guard let json = jsonObject(response) else { return "not a JSON object: \(printable(response.body))" }
            if !same(json["name"], name) { return "name \(String(describing: json["name"])) is not \(name.debugDescription)" }
            if let problem = echoProblem(response, "X-Echo", name) { return problem }
            if response.status == 503 { return json["step"] as? Int == 1 ? nil : "not the cycle's step" }
            if mode == "slow" { return json["slow"] as? Bool == true ? nil : "not the slow rule" }
            if !same(json["thing"], thing) { return "thing \(String(describing: json["thing"])) is not \(thing.debugDescription)" }
            if let problem = echoProblem(response, "X-Thing-Echo", thing) { return problem }
            if json["method"] as? String != "GET" || json["path"] as? String != "/echo" { return "wrong method or path" }
            return nil
        }
        return (request(method, target, headers: headers), expected)
    }

    private static func submit(_ random: inout SeededRandom, small: Bool) -> ([UInt8], ExpectedResponse) {
        let field = String(decoding: nasty(&random), as: UTF8.self)
        let nested = String(decoding: nasty(&random), as: UTF8.self)
        let kind = random.pick(["vip", "vip", "other", ""])
        let form = random.chance(0.3)
        var body: [UInt8]
        var headers: [[UInt8]] = []
        if form {
            body = Array("kind=\(kind)&field=".utf8) + encoded(Array(field.utf8), &random)
            headers.append(Array(random.pick(["Content-Type: application/x-www-form-urlencoded",
                                              "Content-Type: Application/X-WWW-Form-URLEncoded; charset=utf-8"]).utf8))
        } else {
            var object: [String: Any] = ["kind": kind, "field": field]
            if random.chance(0.7) { object["user"] = ["name": nested] }
            body = try! Array(JSONSerialization.data(withJSONObject: object))
            headers.append(Array("Content-Type: application/json".utf8))
            if !small && random.chance(0.1) { body += [UInt8](repeating: 0x20, count: random.int(1000...20000)) }
        }
        if random.chance(0.15) { headers.append(Array("Expect: 100-continue".utf8)) }
        var bytes: [UInt8]
        if random.chance(0.3) {
            headers.append(Array("Transfer-Encoding: chunked".utf8))
            bytes = request("POST", Array("/submit".utf8), headers: headers) + chunkedBody(body, &random)
        } else {
            bytes = request("POST", Array("/submit".utf8), headers: headers, body: body)
        }
        let vip = kind == "vip" && !field.isEmpty
        let expectNested = !form
        let expected = ExpectedResponse(statuses: [vip ? 201 : 202], method: "POST") { response in
            guard let json = jsonObject(response) else { return "not a JSON object: \(printable(response.body))" }
            if !same(json["field"], field) { return "field \(String(describing: json["field"])) is not \(field.debugDescription)" }
            if let problem = echoProblem(response, "X-Field", field) { return problem }
            if !vip && expectNested, let echoed = json["nested"] as? String, !same(echoed, nested) && !echoed.isEmpty {
                return "nested \(echoed.debugDescription) is not \(nested.debugDescription)"
            }
            return nil
        }
        return (bytes, expected)
    }

    /// `body` in chunks of random sizes, with extensions and trailers now and then.
    static func chunkedBody(_ body: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        while offset < body.count {
            let size = min(body.count - offset, random.int(1...max(1, body.count / 2 + 1)))
            out += Array(String(size, radix: 16, uppercase: random.chance(0.5)).utf8)
            if random.chance(0.1) { out += Array(";ext=\"v\"".utf8) }
            out += crlf + body[offset..<offset + size] + crlf
            offset += size
        }
        out += Array("0".utf8) + crlf
        if random.chance(0.2) { out += Array("X-Trailer: t".utf8) + crlf }
        return out + crlf
    }

    private static func item(_ random: inout SeededRandom) -> ([UInt8], ExpectedResponse) {
        var id = nasty(&random).filter { $0 != UInt8(ascii: "/") && $0 != 0 }
        if id.isEmpty { id = word(&random) }
        let text = String(decoding: id, as: UTF8.self)
        let method = random.pick(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
        let body: [UInt8]? = method == "GET" ? nil : random.pick([nil, [], Array("x".utf8)])
        let expected = ExpectedResponse(statuses: [200], method: method) { response in
            guard let json = jsonObject(response) else { return "not a JSON object: \(printable(response.body))" }
            if !same(json["id"], text) { return "id \(String(describing: json["id"])) is not \(text.debugDescription)" }
            if json["method"] as? String != method { return "method \(String(describing: json["method"])) is not \(method)" }
            if let problem = echoProblem(response, "X-Id", text) { return problem }
            return nil
        }
        return (request(method, Array("/items/".utf8) + encoded(id, &random), body: body), expected)
    }

    private static func staticText(_ random: inout SeededRandom) -> ([UInt8], ExpectedResponse) {
        let value = nasty(&random)
        let target = Array("/static/".utf8) + word(&random) + Array("/x.txt?name=".utf8) + encoded(value, &random)
        let expected = ExpectedResponse(statuses: [200]) { response in
            let body = Array("plain ".utf8) + Array(String(decoding: value, as: UTF8.self).utf8)
            if response.body != body { return "text body \(printable(response.body)) is not \(printable(body))" }
            return response.header("Content-Type") == "text/plain; charset=utf-8" ? nil : "not text/plain"
        }
        return (request("GET", target), expected)
    }

    private static func admin(_ random: inout SeededRandom) -> ([UInt8], ExpectedResponse) {
        let session = encoded(nasty(&random) + word(&random), &random)
        let limit = random.int(0...20)
        let (method, target, status): (String, [UInt8], Int) = random.weighted([
            (2, ("GET", Array("/__mishap/health".utf8), 200)),
            (1, ("GET", Array("/__mishap/scenarios".utf8), 200)),
            (3, ("GET", Array("/__mishap/requests?limit=\(limit)".utf8), 200)),
            (1, ("GET", Array("/__mishap/requests?limit=3&session=".utf8) + session, 200)),
            (1, ("GET", Array("/__mishap/requests?limit=-1".utf8), 400)),
            (1, ("GET", Array("/__mishap/retries?session=".utf8) + session, 200)),
            (1, ("POST", Array("/__mishap/reset?session=".utf8) + session, 200)),
            (1, ("GET", Array("/__mishap/nowhere".utf8) + session, 404)),
            (1, ("DELETE", Array("/__mishap/health".utf8), 405)),
        ])
        let expected = ExpectedResponse(statuses: [status], method: method) { response in
            jsonObject(response) == nil ? "not a JSON object: \(printable(response.body))" : nil
        }
        return (request(method, target), expected)
    }

    private static func http10(_ random: inout SeededRandom) -> ([UInt8], ExpectedResponse) {
        let value = word(&random)
        let expected = ExpectedResponse(statuses: [200]) { response in
            jsonObject(response)?["name"] as? String == String(decoding: value, as: UTF8.self) ? nil : "wrong echo \(printable(response.body))"
        }
        return (request("GET", Array("/echo?name=".utf8) + value, version: "HTTP/1.0", host: random.chance(0.5)), expected)
    }

    // MARK: Limits

    /// Headers past the 8 KiB limit: one large one, or many small ones; within the connection's
    /// buffer Mishap answers 431 and keeps the connection (a request after it is answered),
    /// past it libmicrohttpd answers 431 itself and closes.
    private static func headersOverLimit(_ random: inout SeededRandom) -> FuzzCase {
        var headers: [[UInt8]] = []
        let limit = HTTPFuzzTests.configuration.maxHeaderBytes
        switch random.int(0...2) {
        case 0: headers.append(Array("X-Pad: ".utf8) + [UInt8](repeating: UInt8(ascii: "p"), count: random.int(limit + 1...limit + 3000)))
        case 1: headers.append(Array("X-Pad: ".utf8) + [UInt8](repeating: UInt8(ascii: "p"), count: random.int(16_000...100_000)))
        default:
            for index in 0..<random.int(250...1200) { headers.append(Array("X-Many-\(index): ".utf8) + word(&random, 20...60)) }
        }
        let refused = ExpectedResponse(statuses: [431]) { response in
            response.has("Content-Type") && jsonObject(response) == nil ? "a 431 with a body that is not JSON" : nil
        }
        let (next, after) = valid("echo", &random, small: true)
        return FuzzCase(kind: "headersOverLimit", pieces: [request("GET", Array("/echo?name=big".utf8), headers: headers) + next],
                        ending: .awaitResponses, expected: [refused, after])
    }

    /// Bodies past the 64 KiB limit (413, then the connection goes on) and exactly at it.
    private static func bodyOverLimit(_ random: inout SeededRandom) -> FuzzCase {
        let limit = HTTPFuzzTests.configuration.maxBodyBytes
        let (next, after) = valid("echo", &random, small: true)
        if random.chance(0.25) {
            // Exactly at the limit: read whole, a JSON body padded with spaces.
            var body = Array(#"{"kind":"other","field":"edge"}"#.utf8)
            body += [UInt8](repeating: 0x20, count: limit - body.count)
            let accepted = ExpectedResponse(statuses: [202], method: "POST") { jsonObject($0)?["field"] as? String == "edge" ? nil : "wrong echo" }
            return FuzzCase(kind: "bodyAtLimit", pieces: [request("POST", Array("/submit".utf8), headers: [Array("Content-Type: application/json".utf8)], body: body) + next],
                            ending: .awaitResponses, expected: [accepted, after])
        }
        let body = (0..<random.int(limit + 1...limit + 40_000)).map { _ in random.byte() }
        let bytes = random.chance(0.5)
            ? request("POST", Array("/submit".utf8), body: body)
            : request("POST", Array("/submit".utf8), headers: [Array("Transfer-Encoding: chunked".utf8)]) + chunkedBody(body, &random)
        let refused = ExpectedResponse(statuses: [413], method: "POST") { response in
            jsonObject(response)?["reason"] as? String == "Request body larger than \(limit) bytes" ? nil : "not the 413 body: \(printable(response.body))"
        }
        return FuzzCase(kind: "bodyOverLimit", pieces: [bytes + next], ending: .awaitResponses, expected: [refused, after])
    }

    // MARK: Broken requests

    private static func requestLine(_ random: inout SeededRandom) -> [UInt8] {
        let method = random.pick(["GET", "GET", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE", "get", "Get", "GETT",
                                  "G ET", "", "\0GET", "GET\0", "PRI", "BREW", String(repeating: "A", count: 300), "GÉT", "\tGET", "GET:"])
        let huge = "/echo?name=" + String(repeating: "a", count: random.int(2000...30_000))
        let target = random.pick(["/echo?name=a", "*", "http://127.0.0.1/echo?name=abs", "http://[::1]:80/echo", "https://x/echo",
                                  "//echo", "echo", "", "/", "/echo?", "/echo?name", "/echo?=x", "/echo?name=%", "/echo?name=%G1",
                                  "/echo?name=%00", "/echo?name=%C3%28", "/echo?name=%C0%AF", "/echo?name=%%", "/%", "/%00", "/%2e%2e/",
                                  "/items/%2F", "/items/%00x", "/items/a%ZZ", "/echo#frag", "/echo?name=a b", "/ec ho", "/echo\t",
                                  "/../../etc/passwd", "/__mishap/requests?limit=99999999999999999999", "/__mishap/%2e%2e/health",
                                  "/__mishap/", "/__mishap", "/static/", "/static", "/items/", "/items//x", huge])
        let version = random.pick(["HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/9.9", "HTTP/1", "HTTP/1.10", "HTTP/2.0", "HTTP/0.9",
                                   "http/1.1", "HTTP/1.1 extra", "", "HTTP/", "HTTP/1.", "HTTP/11", "HTTPS/1.1", "HTTP/1.1\0", " HTTP/1.1"])
        let separator = random.pick([" ", " ", " ", "  ", "\t", "", "\0", " \t"])
        let end = random.pick(["\r\n", "\r\n", "\n", "\r", "\r\r\n", "\n\r"])
        var line = Array((method + separator + target + separator + version).utf8)
        if random.chance(0.2) {
            line.insert(random.pick([0x00, 0x0D, 0x0A, 0x20, 0x09, 0x7F, 0xFF]), at: random.int(0...line.count))
        }
        var bytes = random.chance(0.1) ? Array("\r\n".utf8) : []
        bytes += line + Array(end.utf8)
        if random.chance(0.8) { bytes += Array("Host: 127.0.0.1".utf8) + Array(end.utf8) }
        return bytes + Array(end.utf8)
    }

    private static func headerJunk(_ random: inout SeededRandom) -> [UInt8] {
        let lines: [String] = [
            "NoColonHere", ": empty-name", "Bad Name: x", "Host : 127.0.0.1", "X-Thing:\0nul", "X-Thing: a\0b", "X-\0Thing: v",
            " leading: space", "X-Thing: a\r\n b", "X-Thing: a\r\n\tb\r\n  c", "X-Thing: folded\r\n X-Injected: yes",
            "X-Thing:", "X-Thing: \u{1}\u{7F}\u{1B}[31m", "X-Thing: a\rb", "X-Thing: a\nX-Injected: yes", "Host: other",
            "Host:", "Content-Length: 0", "X-Thing: %0d%0aX-Injected:%20yes", "X-Mishap-Rule: echo", "X-Mishap-Rule: slow",
            "X-Mishap-Rule: nope", "X-Mishap-Rule: maintenance", "X-Mishap-Session: \u{1}\u{7F}", "X-Mishap-Session: ",
            "Connection: close", "Connection: keep-alive, Upgrade", "Upgrade: websocket", "Expect: 100-continue",
            "Expect: bogus", "Transfer-Encoding: chunked", "Accept-Encoding: gzip", "X-Thing: \t\t",
        ]
        var junk: [[UInt8]] = lines.map { Array($0.utf8) }
        junk += [
            Array("X-Thing: ".utf8) + [0xFF, 0xFE, 0xC0, 0xAF, 0xED, 0xA0, 0x80],
            Array(String(repeating: "N", count: 2000).utf8) + Array(": long name".utf8),
            Array("X-Thing: ".utf8) + [UInt8](repeating: UInt8(ascii: "v"), count: 3000),
            [0xC3, 0xA9] + Array(": non-ASCII name".utf8),
        ]
        var headers: [[UInt8]] = []
        for _ in 0..<random.int(1...6) { headers.append(random.pick(junk)) }
        if random.chance(0.1) {
            for index in 0..<random.int(50...400) { headers.append(Array("X-N\(index): v".utf8)) }
        }
        if random.chance(0.03) {
            headers.append(Array("Cookie: ".utf8) + Array((0..<random.int(10...900)).map { "c\($0)=v" }.joined(separator: "; ").utf8))
        }
        var target = random.pick(["/echo?name=junk", "/echo?name=junk&mode=slow", "/items/x", "/static/a"])
        if random.chance(0.03) { target += (0..<random.int(10...1200)).map { "&p\($0)=\($0)" }.joined() }
        var bytes = request(random.pick(["GET", "GET", "POST"]), Array(target.utf8), host: random.chance(0.8), headers: headers)
        if random.chance(0.3) { bytes = bytes.map { $0 } + valid("echo", &random, small: true).0 }
        if random.chance(0.2) {
            // Bare LF line ends for some lines.
            bytes = replaceSomeCRLF(bytes, &random)
        }
        return bytes
    }

    private static func replaceSomeCRLF(_ bytes: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x0D, index + 1 < bytes.count, bytes[index + 1] == 0x0A, random.chance(0.4) {
                index += 1
                continue
            }
            out.append(bytes[index])
            index += 1
        }
        return out
    }

    private static func contentLength(_ random: inout SeededRandom) -> [UInt8] {
        let body = random.chance(0.6) ? Array(#"{"kind":"vip","field":"cl"}"#.utf8) : word(&random, 0...20)
        let values = ["-1", "abc", "1e3", "0x10", " 5", "5 ", "+5", "99999999999999999999999", "18446744073709551615",
                      "9223372036854775807", "5, 5", "5,6", "", "0", "00005", "5\0", "\(body.count)", "\(body.count + 10)",
                      "\(max(0, body.count - 5))", "\(body.count), \(body.count)", "1" + String(repeating: "0", count: 40)]
        var headers: [[UInt8]] = [Array("Content-Type: application/json".utf8)]
        for _ in 0..<random.int(1...2) { headers.append(Array("Content-Length: \(random.pick(values))".utf8)) }
        if random.chance(0.2) { headers.append(Array("Transfer-Encoding: chunked".utf8)) }
        headers.shuffle(using: &random)
        var bytes = request("POST", Array("/submit".utf8), headers: headers) + body
        if random.chance(0.3) { bytes += valid("echo", &random, small: true).0 }
        return bytes
    }

    private static func chunked(_ random: inout SeededRandom) -> [UInt8] {
        let coding = random.pick(["chunked", "chunked", "chunked", "Chunked", "CHUNKED", "chunked, chunked", "gzip, chunked",
                                  "chunked, gzip", "identity", " chunked", "chunked;q=1", "x", ""])
        var headers: [[UInt8]] = [Array("Content-Type: application/json".utf8), Array("Transfer-Encoding: \(coding)".utf8)]
        if random.chance(0.2) { headers.append(Array("Content-Length: \(random.int(0...40))".utf8)) }
        if random.chance(0.1) { headers.append(Array("Transfer-Encoding: chunked".utf8)) }
        headers.shuffle(using: &random)
        var body: [UInt8] = []
        let payload = Array(#"{"kind":"vip","field":"chunks"}"#.utf8)
        var offset = 0
        for _ in 0..<random.int(1...5) {
            let size = min(payload.count - offset, random.int(0...12))
            let declared = random.weighted([
                (6, String(size, radix: 16)), (1, "zz"), (1, "-1"), (1, "fffffffffffffffffff"), (1, "0x10"), (1, " \(size)"),
                (1, "\(size) "), (1, "\(size);ext=1"), (1, "\(size);"), (1, "7fffffffffffffff"), (1, ""), (1, String(size + 1, radix: 16)),
                (1, "ffffffff"),
            ])
            body += Array(declared.utf8) + Array(random.pick(["\r\n", "\r\n", "\r\n", "\n", ""]).utf8)
            body += payload[offset..<offset + size]
            offset += size
            body += Array(random.pick(["\r\n", "\r\n", "\r\n", "\n", "", "xx\r\n"]).utf8)
        }
        if random.chance(0.8) {
            body += Array("0".utf8) + crlf
            for _ in 0..<random.int(0...2) {
                body += Array(random.pick(["X-Trailer: a", "Content-Length: 5", "bad trailer", "X-Thing: \r\nX-Injected: yes", ": x"]).utf8) + crlf
            }
            if random.chance(0.9) { body += crlf }
        }
        var bytes = request("POST", Array("/submit".utf8), headers: headers) + body
        if random.chance(0.3) { bytes += valid("echo", &random, small: true).0 }
        return bytes
    }

    /// Invalid percent-encoding and raw invalid UTF-8 in the path, the query and header values.
    private static func encoding(_ random: inout SeededRandom) -> [UInt8] {
        let raw: [[UInt8]] = [
            Array("%".utf8), Array("%G1".utf8), Array("%00".utf8), Array("%C3%28".utf8), Array("%C0%AF".utf8), Array("%ED%A0%80".utf8),
            Array("%F8%88%80%80%80".utf8), Array("%0d%0aX-Injected:%20yes".utf8), Array("%%%".utf8), Array("%2".utf8), Array("+".utf8),
            [0xC3, 0x28], [0xFF], [0xC0, 0xAF], [0x80], [0xED, 0xA0, 0x80], Array("é".utf8), [0x7F], [0x01],
        ]
        func value(_ random: inout SeededRandom) -> [UInt8] {
            (0..<random.int(1...4)).flatMap { _ in random.chance(0.5) ? random.pick(raw) : word(&random) }
        }
        let (first, second) = (value(&random), value(&random))
        let target: [UInt8] = random.weighted([
            (3, Array("/echo?name=".utf8) + first),
            (1, Array("/echo?".utf8) + first + Array("=x&name=".utf8) + second),
            (2, Array("/items/".utf8) + first),
            (1, Array("/static/".utf8) + first + Array("?name=".utf8) + second),
            (1, Array("/".utf8) + first),
            (1, Array("/__mishap/requests?limit=2&session=".utf8) + first),
        ])
        var headers: [[UInt8]] = []
        if random.chance(0.6) { headers.append(Array("X-Thing: ".utf8) + value(&random)) }
        if random.chance(0.2) { headers.append(Array("X-Mishap-Session: ".utf8) + value(&random)) }
        return request(random.chance(0.8) ? "GET" : "DELETE", target, headers: headers)
    }

    /// Byte-level damage: bits flipped, bytes inserted, deleted, duplicated, overwritten, or the
    /// end cut off.
    static func mutate(_ original: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var bytes = original
        let interesting: [[UInt8]] = [
            [0x0D], [0x0A], [0x0D, 0x0A], [0x0D, 0x0A, 0x0D, 0x0A], [0x00], [0x20], [0x09], [0x3A], [0x25], [0xFF], [0x80],
            Array("%00".utf8), Array("Content-Length: 5\r\n".utf8), Array("Transfer-Encoding: chunked\r\n".utf8),
            Array("\r\n X".utf8), Array("9999999999".utf8), Array("-".utf8), Array(";".utf8),
        ]
        for _ in 0..<random.int(1...4) where !bytes.isEmpty {
            let at = random.int(0...bytes.count - 1)
            switch random.int(0...6) {
            case 0: bytes[at] ^= 1 << UInt8(random.int(0...7))
            case 1: bytes[at] = random.pick(interesting)[0]
            case 2: bytes.insert(contentsOf: random.chance(0.7) ? random.pick(interesting) : (0..<random.int(1...8)).map { _ in random.byte() }, at: at)
            case 3: bytes.removeSubrange(at..<min(bytes.count, at + random.int(1...16)))
            case 4:
                let piece = bytes[at..<min(bytes.count, at + random.int(1...32))]
                for _ in 0..<random.int(1...3) { bytes.insert(contentsOf: piece, at: at) }
            case 5: bytes[at] = random.byte()
            default: bytes.removeSubrange(at...)
            }
        }
        return bytes
    }

    /// A connection reset by the client mid-headers, mid-body, or while its (delayed) answer is
    /// being prepared.
    private static func abort(_ random: inout SeededRandom) -> FuzzCase {
        let whole: [UInt8]
        switch random.int(0...2) {
        case 0: whole = valid("echo", &random).0
        case 1: whole = request("POST", Array("/submit".utf8), headers: [Array("Content-Type: application/json".utf8)],
                                body: Array(#"{"kind":"vip","field":"reset"}"#.utf8) + [UInt8](repeating: 0x20, count: random.int(0...30_000)))
        default: whole = request("GET", Array("/echo?name=reset&mode=slow".utf8))
        }
        let cut = random.chance(0.3) ? whole.count : random.int(1...whole.count)
        return FuzzCase(kind: "abort", pieces: split(Array(whole[..<cut]), into: random.int(1...3), &random), ending: .abort)
    }
}

/// A JSON object from a response body, if it is one.
func jsonObject(_ response: WireResponse) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(response.body), options: [.fragmentsAllowed])) as? [String: Any]
}

// MARK: - Running and checking

/// What one case produced on the wire.
struct FuzzOutcome {
    var received: [UInt8] = []
    var end: FuzzSocket.End = .satisfied
    /// The errno that stopped sending (the server had closed), if any.
    var sendError: Int32?
    var connectError: String?
    var elapsed: Duration = .zero
    /// From our half-close to the end of the stream.
    var afterHalfClose: Duration?
}

enum FuzzRunner {
    /// How long a case may wait for the server: its idle timeout closes any connection by then.
    static let patience: Duration = .seconds(HTTPFuzzTests.configuration.connectionTimeoutSeconds + 4)

    static func run(_ fuzzCase: FuzzCase, port: UInt16) -> FuzzOutcome {
        let started = ContinuousClock.now
        var outcome = exchange(fuzzCase, port: port)
        outcome.elapsed = .now - started
        return outcome
    }

    private static func exchange(_ fuzzCase: FuzzCase, port: UInt16) -> FuzzOutcome {
        var outcome = FuzzOutcome()
        let socket: FuzzSocket
        do { socket = try FuzzSocket(port: port) } catch {
            outcome.connectError = "\(error)"
            return outcome
        }
        defer { socket.close() }
        for (index, piece) in fuzzCase.pieces.enumerated() {
            if index > 0 && fuzzCase.pauseMicroseconds > 0 { usleep(UInt32(fuzzCase.pauseMicroseconds)) }
            if let code = socket.write(piece) {
                outcome.sendError = code
                break
            }
        }
        let deadline = ContinuousClock.now + patience
        switch fuzzCase.ending {
        case .abort:
            socket.abort()
        case .halfClose:
            // The half-close goes out once the server has gone quiet: libmicrohttpd (0.9.75,
            // epoll) takes a short read as "drained", so a FIN that arrives with the last
            // request bytes goes unseen until its idle timeout closes the connection.
            outcome.end = readUntilQuiet(socket, into: &outcome.received, deadline: deadline)
            if outcome.end == .satisfied {
                socket.shutdownWrite()
                let halfClosed = ContinuousClock.now
                outcome.end = socket.read(into: &outcome.received, until: deadline)
                outcome.afterHalfClose = .now - halfClosed
            }
        case .readThenHalfClose(let milliseconds):
            outcome.end = socket.read(into: &outcome.received, until: .now + .milliseconds(milliseconds))
            if outcome.end == .timedOut {
                socket.shutdownWrite()
                let halfClosed = ContinuousClock.now
                outcome.end = socket.read(into: &outcome.received, until: deadline)
                outcome.afterHalfClose = .now - halfClosed
            }
        case .awaitResponses:
            let wanted = fuzzCase.expected?.count ?? 1
            let isHead = headFlags(fuzzCase)
            outcome.end = socket.read(into: &outcome.received, until: deadline) {
                WireReader.read($0, atEnd: false, isHead: isHead).finalCount >= wanted
            }
        }
        return outcome
    }

    /// Reads until nothing has arrived for `quiet`, the server closes, or `deadline` passes.
    static func readUntilQuiet(_ socket: FuzzSocket, into received: inout [UInt8], deadline: ContinuousClock.Instant,
                               quiet: Duration = .milliseconds(5)) -> FuzzSocket.End {
        while ContinuousClock.now < deadline {
            let before = received.count
            let end = socket.read(into: &received, until: min(.now + quiet, deadline))
            if end != .timedOut { return end }
            if received.count == before { return .satisfied }
        }
        return .timedOut
    }

    /// libmicrohttpd 0.9.75 refuses some requests while it parses their headers (a
    /// `Content-Length` it cannot parse: not a plain decimal number, or past 64 bits; cookies
    /// past its memory pool) with a 400, 413 or 431 whose head it writes twice (its error path
    /// builds the head, then its state machine goes on and builds it again), then closes:
    /// `HEAD HEAD BODY`. The access handler is never called for such a request, so Mishap
    /// cannot intervene. This returns the bytes without the first copy when they are exactly
    /// that (two heads equal but for the date, then libmicrohttpd's own HTML error page), so
    /// the rest is still read strictly.
    static func withoutDoubledErrorHead(_ bytes: [UInt8]) -> [UInt8]? {
        guard let firstEnd = bytes.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound else { return nil }
        let first = String(decoding: bytes[..<firstEnd], as: UTF8.self)
        let rest = Array(bytes[firstEnd...])
        guard rest.count >= firstEnd, ["400", "413", "431"].contains(where: { first.hasPrefix("HTTP/1.1 \($0) ") }),
              first.contains("\r\nConnection: close\r\n") else { return nil }
        let second = String(decoding: rest[..<firstEnd], as: UTF8.self)
        func withoutDate(_ head: String) -> [Substring] { head.split(separator: "\r\n").filter { !$0.hasPrefix("Date:") } }
        guard withoutDate(first) == withoutDate(second),
              String(decoding: rest[firstEnd...], as: UTF8.self).hasPrefix("<html><head><title>") else { return nil }
        return rest
    }

    static func headFlags(_ fuzzCase: FuzzCase) -> (Int) -> Bool {
        let methods = fuzzCase.expected?.map(\.method) ?? []
        return { $0 < methods.count && methods[$0] == "HEAD" }
    }

    /// Statuses an answer may have: the scenario's, Mishap's own (400 for a forced rule it does
    /// not know, 404, 405, 413, 431) and libmicrohttpd's refusals of broken requests. A 500
    /// would mean the server failed itself.
    static let allowedStatuses: Set<Int> = [100, 200, 201, 202, 400, 404, 405, 411, 413, 414, 417, 431, 501, 503, 505]

    /// The problems with an outcome, and the label it is counted under.
    static func check(_ fuzzCase: FuzzCase, _ outcome: FuzzOutcome) -> (problems: [String], label: String) {
        if let connectError = outcome.connectError { return (["could not connect: \(connectError)"], "connect failed") }
        if case .abort = fuzzCase.ending { return ([], "reset by the client") }
        var problems: [String] = []
        let closedByServer = outcome.end == .closed || outcome.end == .reset
        let doubled = withoutDoubledErrorHead(outcome.received)
        let stream = WireReader.read(doubled ?? outcome.received, atEnd: closedByServer, isHead: headFlags(fuzzCase))
        let finals = stream.responses.filter { !$0.isInterim }

        if let problem = stream.problem { problems.append("not HTTP: \(problem)") }
        if stream.problem == nil && !stream.leftover.isEmpty {
            problems.append(closedByServer ? "an incomplete response before the close: \(printable(stream.leftover))"
                                           : "bytes beyond the expected responses: \(printable(stream.leftover))")
        }
        if outcome.end == .timedOut { problems.append("the server neither answered nor closed within \(patience)") }
        if case .failed = outcome.end { problems.append("receive failed: \(outcome.end)") }

        // A reset from the server means it closed with bytes of ours still unread: the kernel
        // then sends RST instead of FIN (RFC 9112 9.6 asks servers to close in stages to avoid
        // it; libmicrohttpd closes at once). Valid requests see that only after libmicrohttpd's
        // own refusals that announce the close (431 for headers past the connection's buffer,
        // 414, 413 for an unparsable length) or when it closed while we were still sending.
        // A broken request may also be dropped without an answer (libmicrohttpd closes on a
        // request line it cannot parse). A close by Mishap's handler shows in the daemon log.
        var label: String
        if doubled != nil {
            label = "libmicrohttpd's doubled error head"
            if outcome.end != .closed && outcome.end != .reset { problems.append("not closed after the doubled error head") }
        } else if outcome.end == .reset {
            let announced = finals.last?.announcesClose == true || outcome.sendError != nil
            if !announced && fuzzCase.expected != nil {
                problems.append("reset by the server without a response announcing a close")
            }
            label = announced ? "reset after \(finals.last.map { "a \($0.status) with close" } ?? "refusing while we sent")"
                              : "reset after a broken request"
        } else if outcome.end == .closed, let wait = outcome.afterHalfClose, wait >= .seconds(1) {
            // The libmicrohttpd FIN race (see `run`) despite the pause before the half-close:
            // the connection was closed by the idle timeout.
            label = "closed by the idle timeout after a half-close"
        } else if outcome.end == .closed {
            label = finals.isEmpty ? "closed without a response" : "closed after responses"
        } else {
            label = "answered, kept open"
        }

        for response in finals {
            problems += generalProblems(response)
        }
        if let expected = fuzzCase.expected {
            let answered = min(finals.count, expected.count)
            for (response, expectation) in zip(finals, expected) {
                if !expectation.statuses.contains(response.status) {
                    problems.append("status \(response.status) where \(expectation.statuses.sorted()) was expected: \(printable(response.body))")
                } else if let problem = expectation.check(response) {
                    problems.append("\(response.status): \(problem)")
                }
            }
            if finals.count > expected.count { problems.append("\(finals.count) responses to \(expected.count) requests") }
            // Fewer answers than requests: fine after a half-close (the server may stop reading),
            // or when the last answer refused a request and announced the close.
            if answered < expected.count, case .awaitResponses = fuzzCase.ending {
                let refusedAndClosed = finals.last.map { $0.status >= 400 && $0.announcesClose } ?? false
                if !refusedAndClosed && outcome.end != .timedOut {
                    problems.append("\(answered) of \(expected.count) requests answered before the connection \(outcome.end)")
                }
            }
        }
        return (problems, label)
    }

    /// Rules every response obeys: no injected header, valid JSON when it says JSON, an
    /// expected status.
    static func generalProblems(_ response: WireResponse) -> [String] {
        var problems: [String] = []
        if response.has("X-Injected") { problems.append("a request value added a header: \(response.headers)") }
        if !allowedStatuses.contains(response.status) { problems.append("unexpected status \(response.status): \(printable(response.body))") }
        if response.header("Content-Type")?.hasPrefix("application/json") == true && !response.body.isEmpty {
            if (try? JSONSerialization.jsonObject(with: Data(response.body), options: [.fragmentsAllowed])) == nil {
                problems.append("invalid JSON body: \(printable(response.body))")
            } else if String(validating: response.body, as: UTF8.self) == nil {
                problems.append("JSON body is not UTF-8: \(printable(response.body))")
            }
        }
        return problems
    }
}

/// A few clients that send a request one byte at a time, 100 to 300 ms apart (slowloris),
/// alongside the fuzz: the server must answer the ones that finish and close the one that
/// stalls once its idle timeout passes.
enum SlowClients {
    static let count = 4

    static func run(_ index: Int, seed: UInt64, port: UInt16, board: FuzzBoard) {
        var random = SeededRandom(seed: seed, case: -1 - index)
        let name = "slow\(index)"
        let stalls = index == count - 1
        let request = Array("GET /echo?name=\(name) HTTP/1.0\r\n\r\n".utf8)
        let label = "slowloris \(index)"
        let socket: FuzzSocket
        do { socket = try FuzzSocket(port: port) } catch {
            board.fail(label, "could not connect: \(error)")
            return
        }
        defer { socket.close() }
        let sent = stalls ? request.prefix(8) : request[...]
        for byte in sent {
            if let code = socket.write([byte]) {
                board.fail(label, "the server stopped reading a trickled request (errno \(code))")
                return
            }
            usleep(UInt32(random.int(100...300)) * 1000)
        }
        var received: [UInt8] = []
        let started = ContinuousClock.now
        let end = socket.read(into: &received, until: .now + FuzzRunner.patience + .seconds(2))
        let stream = WireReader.read(received, atEnd: end == .closed || end == .reset)
        if stalls {
            // Idle past the timeout: closed without an answer (or with a well-formed one).
            if end != .closed || stream.problem != nil || !stream.leftover.isEmpty {
                board.fail(label, "a stalled trickle was not closed cleanly: \(end), \(printable(received))")
            }
            board.note("slowloris stalled, closed after \(started.duration(to: .now))")
            return
        }
        let response = stream.responses.first { !$0.isInterim }
        let json = response.flatMap(jsonObject)
        if end != .closed || stream.problem != nil || response?.status != 200 || json?["name"] as? String != name {
            board.fail(label, "a trickled request was not answered: \(end), \(stream.problem ?? ""), \(printable(received))")
        }
        board.note("slowloris answered")
    }
}

/// What the cases found, shared by the workers.
final class FuzzBoard: Sendable {
    private struct State {
        var failures: [String] = []
        var failingCases = 0
        var kinds: [String: Int] = [:]
        var statuses: [Int: Int] = [:]
        var labels: [String: Int] = [:]
        var responses = 0
        var bytesSent = 0
        var slowest: [(Duration, Int, String)] = []
        var time: [String: Duration] = [:]
        /// Cases by duration: under 10 ms, 50 ms, 200 ms, 1 s, and longer.
        var durations = [0, 0, 0, 0, 0]
        var problemKinds: [String: Int] = [:]
    }

    let seed: UInt64
    private let state = Mutex(State())

    init(seed: UInt64) { self.seed = seed }

    func record(index: Int, _ fuzzCase: FuzzCase, _ outcome: FuzzOutcome) {
        let (problems, label) = FuzzRunner.check(fuzzCase, outcome)
        let stream = WireReader.read(outcome.received, atEnd: true)
        state.withLock { state in
            state.kinds[fuzzCase.kind, default: 0] += 1
            state.labels[label, default: 0] += 1
            state.bytesSent += fuzzCase.bytes.count
            for response in stream.responses {
                state.statuses[response.status, default: 0] += 1
                state.responses += 1
            }
            state.slowest.append((outcome.elapsed, index, "\(fuzzCase.kind) \(fuzzCase.ending) \(label)"))
            state.slowest.sort { $0.0 > $1.0 }
            if state.slowest.count > 8 { state.slowest.removeLast() }
            state.time[fuzzCase.kind, default: .zero] += outcome.elapsed
            state.durations[[.milliseconds(10), .milliseconds(50), .milliseconds(200), .seconds(1)].firstIndex { outcome.elapsed < $0 } ?? 4] += 1
            for problem in problems {
                state.problemKinds["\(fuzzCase.kind): " + String(problem.prefix { $0 != ":" }.prefix(60)), default: 0] += 1
            }
            guard !problems.isEmpty else { return }
            state.failingCases += 1
            state.failures.append("seed \(seed) case \(index) (\(fuzzCase.kind)): \(problems.joined(separator: "; "))\n"
                + "    sent: \(printable(fuzzCase.bytes, limit: 400))\n    got (\(outcome.end)): \(printable(outcome.received, limit: 600))")
        }
    }

    func fail(_ label: String, _ problem: String) {
        state.withLock { $0.failures.append("seed \(seed) \(label): \(problem)") }
    }

    func note(_ label: String) {
        state.withLock { $0.labels[label.components(separatedBy: ",")[0], default: 0] += 1 }
    }

    var failures: [String] { state.withLock { $0.failures } }

    func summary(cases: Int, elapsed: Duration, descriptors: (Int, Int)) -> String {
        state.withLock { state in
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return """
                HTTP fuzz: seed \(seed), \(cases) cases in \(String(format: "%.1f", seconds)) s (\(state.failingCases) failing), \
                \(state.bytesSent) bytes sent, \(state.responses) responses
                  slowest: \(state.slowest.map { "case \($0.1) \($0.2) \($0.0)" }.joined(separator: "; "))
                  kinds: \(state.kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
                  statuses: \(state.statuses.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: ", "))
                  endings: \(state.labels.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
                  durations (<10 ms, <50 ms, <200 ms, <1 s, longer): \(state.durations)
                  time per kind: \(state.time.sorted { $0.value > $1.value }.prefix(8).map { "\($0.key) \($0.value)" }.joined(separator: ", "))
                  problems: \(state.problemKinds.sorted { $0.value > $1.value }.map { "\($0.key) ×\($0.value)" }.joined(separator: "\n    "))
                  descriptors of the process before/after: \(descriptors.0)/\(descriptors.1)
                """
        }
    }
}
