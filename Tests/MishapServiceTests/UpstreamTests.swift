import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import MishapUpstream
import Testing

/// `--upstream`: requests no rule answers go to a real upstream server on loopback (a second
/// Mishap, whose journal shows exactly what it received) and its answers come back; the rules
/// still answer what they claim; an upstream that is down or slow is answered 502 or 504 in
/// JSON; slow upstream calls hold no server thread.
/// One test at a time: several hold many connections, which other suites' timing tests feel.
@Suite(.onBlockingThreads, .serialized) struct UpstreamTests {
    /// The upstream: echoes nothing itself (its journal keeps what came), answers by path.
    static let upstreamYAML = """
        endpoints:
          - endpoint: ANY /things/{id}
            rules:
              - name: thing
                respond:
                  status: 201
                  headers: { X-Upstream: "yes", Cache-Control: "no-store" }
                  json: { id: "{{path.id}}", from: upstream }
          - endpoint: GET /slow
            rules:
              - name: slow
                respond: { delay: 1000, text: slow }
          - endpoint: GET /login
            rules:
              - name: upstreamLogin
                respond: { text: upstream login }
          - endpoint: GET /broken/{fault}
            rules:
              - { name: reset, when: { path: { fault: reset } }, respond: { fault: reset } }
              - { name: garbage, when: { path: { fault: garbage } }, respond: { fault: garbage } }
              - { name: truncate, when: { path: { fault: truncate } }, respond: { fault: truncate, text: "a body cut short" } }
        """

    /// The front: one local endpoint that fails on purpose, one that shadows the upstream's.
    static let frontYAML = """
        endpoints:
          - endpoint: GET /maintenance
            rules:
              - name: down
                respond: { status: 503, headers: { Retry-After: "5" }, text: local maintenance }
          - endpoint: GET /login
            rules:
              - name: localLogin
                respond: { text: local login }
        """

    static func front(upstream: String, timeoutMilliseconds: Int = 10_000) throws -> TestServer {
        try TestServer(yaml: frontYAML, options: ServiceOptions(upstream: UpstreamOptions(url: upstream, timeoutMilliseconds: timeoutMilliseconds)))
    }

    static func upstreamURL(_ upstream: TestServer) -> String { "http://127.0.0.1:\(upstream.port)" }

    /// The requests the upstream received, oldest first.
    static func received(_ upstream: TestServer) -> [JournalEntry] { upstream.service.journal.entries().entries }

    @Test func passesThroughWhatNoRuleAnswers() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let front = try Self.front(upstream: Self.upstreamURL(upstream))

        // Claimed by a rule of the front: answered there; the upstream never hears of it.
        let local = try await front.send("GET", "/login")
        #expect(local.status == 200 && local.text == "local login")
        let maintenance = try await front.send("GET", "/maintenance")
        #expect(maintenance.status == 503 && maintenance.header("Retry-After") == "5")
        #expect(Self.received(upstream).isEmpty)

        // Claimed by no rule: passed on with method, path, query, headers and body.
        let body = Data(#"{"name":"café"}"#.utf8)
        let answer = try await front.send("POST", "/things/7?q=a%20b&tag=x%26y", body: body, headers: [
            "Content-Type": "application/json", "X-Test": "1", "X-Forwarded-For": "10.0.0.1",
        ])
        #expect(answer.status == 201)
        #expect(answer.header("X-Upstream") == "yes")
        #expect(answer.header("Cache-Control") == "no-store")
        #expect(answer.json?["id"] as? String == "7")
        let sent = try #require(Self.received(upstream).last)
        #expect(sent.method == "POST")
        #expect(sent.path == "/things/7")
        #expect(sent.query == [Field("q", "a b"), Field("tag", "x&y")])
        #expect(sent.body == Array(body))
        let headers = Dictionary(sent.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(headers["x-test"] == "1")
        #expect(headers["content-type"] == "application/json")
        #expect(headers["host"] == "127.0.0.1:\(upstream.port)")
        #expect(headers["x-forwarded-host"] == "127.0.0.1:\(front.port)")
        #expect(headers["x-forwarded-for"] == "10.0.0.1, 127.0.0.1")
        #expect(headers["x-forwarded-proto"] == "http")
        #expect(headers["content-length"] == String(body.count))

        // The front's journal says where the answer came from.
        let entry = try #require(front.service.journal.entries().entries.last)
        #expect(entry.upstream == Self.upstreamURL(upstream))
        #expect(entry.status == 201)
        #expect(entry.endpoint == nil && entry.rule == nil)
        #expect((entry.upstreamMilliseconds ?? -1) >= 0)
    }

    @Test("Every method passes through", arguments: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"])
    func everyMethod(method: String) async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let front = try Self.front(upstream: Self.upstreamURL(upstream))
        let answer = try front.sendRaw(method, "/things/\(method.lowercased())", headers: [("Host", "localhost"), ("Content-Length", "0")])
        #expect(answer.status == 201, "\(method)")
        #expect(answer.header("X-Upstream") == "yes", "\(method)")
        let sent = try #require(Self.received(upstream).last)
        #expect(sent.method == method)
        #expect(sent.path == "/things/\(method.lowercased())")
    }

    /// HEAD's answer declares the length of the body a GET gets, as the upstream said, and sends none.
    @Test func headDeclaresTheUpstreamsLength() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let front = try Self.front(upstream: Self.upstreamURL(upstream))
        let get = try front.sendRaw("GET", "/things/42")
        let length = try #require(get.header("Content-Length").flatMap(Int.init))
        #expect(length == get.body.count && length > 0)
        // On one connection: a body sent after HEAD's head would be read as the next response.
        let connection = try front.connect()
        try connection.sendRequest("HEAD", "/things/42")
        let head = try connection.readResponse(toHead: true)
        #expect(head.status == 201 && head.header("Content-Length") == String(length), "\(head.headers)")
        try connection.sendRequest("GET", "/things/43")
        let next = try connection.readResponse()
        #expect(next.status == 201 && next.json?["id"] as? String == "43")
    }

    /// Hop-by-hop headers of the client stay on its hop too.
    @Test func hopByHopHeadersStay() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let front = try Self.front(upstream: Self.upstreamURL(upstream))
        let answer = try front.sendRaw("GET", "/things/1", headers: [
            ("Host", "localhost"), ("Connection", "keep-alive, X-Secret-Hop"), ("X-Secret-Hop", "1"), ("Keep-Alive", "timeout=5"),
            ("TE", "trailers"), ("X-Kept", "2"),
        ])
        #expect(answer.status == 201)
        let names = Set(try #require(Self.received(upstream).last).headers.map { $0.name.lowercased() })
        #expect(names.contains("x-kept"))
        for dropped in ["x-secret-hop", "keep-alive", "te"] { #expect(!names.contains(dropped), "\(dropped)") }
    }

    /// The upstream's hop-by-hop headers (and those its `Connection` names), `Date` and
    /// `Content-Length` are not passed back: the server writes its own.
    @Test func answerHeadersPassedBack() {
        let result = UpstreamResult.answered(status: 200, headers: [
            ("Connection", "keep-alive, X-Hop"), ("X-Hop", "1"), ("Keep-Alive", "timeout=5"), ("Transfer-Encoding", "chunked"),
            ("Date", "Mon, 01 Jan 2026 00:00:00 GMT"), ("Content-Length", "2"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"),
            ("Content-Encoding", "gzip"),
        ], body: Array("ok".utf8), milliseconds: 1)
        let plan = Forwarding.plan(for: result, upstream: "http://u")
        #expect(plan.status == 200 && plan.body == Array("ok".utf8))
        #expect(plan.headers == [Field("Set-Cookie", "a=1"), Field("Set-Cookie", "b=2"), Field("Content-Encoding", "gzip")])
        let timeout = Forwarding.plan(for: .failed(UpstreamFailure(.timeout, "slow"), milliseconds: 5), upstream: "http://u")
        #expect(timeout.status == 504)
        let refused = Forwarding.plan(for: .failed(UpstreamFailure(.unreachable, "refused"), milliseconds: 5), upstream: "http://u")
        #expect(refused.status == 502)
    }

    @Test func upstreamDownIs502() async throws {
        // A port nothing listens on: bound, then closed.
        let closed = try TestServer(yaml: Self.upstreamYAML)
        let url = Self.upstreamURL(closed)
        closed.instance.stop()
        let front = try Self.front(upstream: url)
        let answer = try await front.send("GET", "/anything")
        #expect(answer.status == 502)
        #expect(answer.header("Content-Type") == "application/json; charset=utf-8")
        let reason = try #require(answer.json?["reason"] as? String)
        #expect(reason.contains(url) && reason.contains("unreachable"), "\(reason)")
        // The rules still answer.
        #expect(try await front.send("GET", "/login").text == "local login")
        #expect(front.service.journal.entries().entries.first?.status == 502)
    }

    /// An upstream that resets the connection, sends what is not HTTP, or cuts its body short
    /// is answered 502, saying so; the next request still gets through.
    @Test("An upstream that breaks the connection is 502", arguments: ["reset", "garbage", "truncate"])
    func brokenUpstreamIs502(fault: String) async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let front = try Self.front(upstream: Self.upstreamURL(upstream))
        let answer = try await front.send("GET", "/broken/\(fault)")
        #expect(answer.status == 502, "\(fault): \(answer.status) \(answer.text)")
        #expect((answer.json?["reason"] as? String)?.contains("gave no answer") == true, "\(answer.text)")
        #expect(try await front.send("GET", "/things/3").status == 201)
    }

    /// An upstream that never answers is answered 504 at the timeout; meanwhile more such
    /// calls than the server has threads wait, and other requests, to the rules and to the
    /// upstream, are still answered: the wait holds no server thread.
    @Test func slowUpstreamIs504AndBlocksNothing() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML + """

              - endpoint: GET /never
                rules:
                  - name: never
                    respond: { hang: true }
            """)
        let front = try Self.front(upstream: Self.upstreamURL(upstream), timeoutMilliseconds: 8000)
        let waiting = 8
        // On connections of their own (URLSession would send a few at a time).
        let slow = try (0..<waiting).map { _ in try RawHTTPConnection(port: front.port, timeoutSeconds: 30) }
        defer { slow.forEach { $0.close() } }
        for connection in slow { try connection.sendRequest("GET", "/never", headers: [("Host", "localhost")]) }
        // Every one of them is out to the upstream before the others are sent.
        while Self.received(upstream).filter({ $0.path == "/never" }).count < waiting {
            try await Task.sleep(for: .milliseconds(10))
        }
        let local = try await front.send("GET", "/login")
        let passed = try await front.send("GET", "/things/2")
        #expect(local.status == 200 && passed.status == 201)
        // Answered while every call to /never still waits (no status, no duration yet).
        let never = front.service.journal.entries().entries.filter { $0.path == "/never" }
        #expect(never.count == waiting)
        #expect(never.allSatisfy { $0.status == nil && $0.durationNanoseconds == nil }, "answered only after the waiting calls timed out")
        for connection in slow {
            let timedOut = try connection.readResponse()
            #expect(timedOut.status == 504)
            #expect((timedOut.json?["reason"] as? String)?.contains("timeout") == true)
        }
    }

    /// Many calls waiting on a slow upstream at once: each held without a thread, all answered.
    @Test func manyWaitingAtOnce() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let front = try Self.front(upstream: Self.upstreamURL(upstream))
        let count = 50
        let connections = try (0..<count).map { _ in try RawHTTPConnection(port: front.port, timeoutSeconds: 60) }
        defer { connections.forEach { $0.close() } }
        let began = ContinuousClock.now
        for connection in connections {
            try connection.sendRequest("GET", "/slow", headers: [("Host", "localhost")])
        }
        // Meanwhile a rule answers.
        #expect(try await front.send("GET", "/maintenance").status == 503)
        for connection in connections {
            let answer = try connection.readResponse()
            #expect(answer.status == 200 && answer.text == "slow")
        }
        // Held side by side (the upstream's delay is 1 s each; one after another, or two at a
        // time on the server's threads, they would take 25 s or more).
        let took = ContinuousClock.now - began
        #expect(took < .seconds(20), "\(count) upstream calls of 1 s took \(took)")
        #expect(Self.received(upstream).count == count)
    }

    /// Stopping with calls out: the connections are closed, the calls cancelled, nothing hangs.
    @Test func stopsWithCallsOut() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let front = try Self.front(upstream: Self.upstreamURL(upstream))
        let connection = try RawHTTPConnection(port: front.port, timeoutSeconds: 5)
        defer { connection.close() }
        try connection.sendRequest("GET", "/slow", headers: [("Host", "localhost")])
        try await Task.sleep(for: .milliseconds(200))
        let began = ContinuousClock.now
        front.instance.stop()
        // Not held for the upstream's answer (a second away) nor for its 10 s timeout.
        #expect(ContinuousClock.now - began < .seconds(5))
        #expect(throws: (any Error).self) { _ = try connection.readResponse() }
    }
}

/// What `--upstream` accepts as a URL (the command line says why it refuses one).
@Suite struct UpstreamURLTests {
    @Test(arguments: [
        ("ftp://example.com", "must start with http:// or https://"),
        ("http://", "has no host"),
        ("https:///path", "has no host"),
        ("http://a/?q=1", "must not hold a query or a fragment"),
        ("http://a/#top", "must not hold a query or a fragment"),
        ("http://user:pw@a", "must not hold a user name or password"),
        ("http://a b", "must not hold spaces or control characters"),
    ])
    func refused(url: String, problem: String) {
        #expect(ProxyTarget.problem(with: url) == problem)
    }

    @Test(arguments: ["http://127.0.0.1:9000", "https://api.example.com/v2/", "HTTP://[::1]:8080/prefix"])
    func accepted(url: String) {
        #expect(ProxyTarget.problem(with: url) == nil)
    }
}
