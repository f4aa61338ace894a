import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// A rule's `proxy`: the upstream's real answer, with the rule's headers, delay, dribble or
/// fault on top, on the routes the rules choose, while other routes pass through untouched.
/// The upstream is a second Mishap, whose journal shows what reached it.
@Suite(.onBlockingThreads, .serialized) struct ProxyRuleTests {
    static let upstreamYAML = """
        endpoints:
          - endpoint: ANY /orders/{id}
            rules:
              - name: order
                respond:
                  status: 201
                  headers: { X-Upstream: "yes", Cache-Control: "no-store" }
                  json: { id: "{{path.id}}", state: paid }
          - endpoint: GET /empty
            rules:
              - { name: empty, respond: { status: 204 } }
        """

    /// The front: breaks chosen routes on top of the upstream's answers, with `proxy: upstream`.
    static let frontYAML = """
        endpoints:
          - endpoint: POST /orders/{id}
            rules:
              - name: lostAnswer
                when: { path: { id: "lost" } }
                respond: { proxy: upstream, fault: reset }
              - name: slowAnswer
                when: { path: { id: "slow" } }
                respond: { proxy: upstream, delay: 700 }
              - name: retryHint
                when: { path: { id: "hint" } }
                respond: { proxy: upstream, headers: { Retry-After: "3", Cache-Control: "max-age=60" } }
          - endpoint: GET /empty
            rules:
              - { name: noise, respond: { proxy: upstream, fault: garbage } }
        """

    static func url(_ server: TestServer) -> String { "http://127.0.0.1:\(server.port)" }

    static func received(_ upstream: TestServer) -> [JournalEntry] { upstream.service.journal.entries().entries }

    @Test func aFaultOnTopOfTheUpstreamsAnswerLosesItAfterTheUpstreamActed() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let front = try TestServer(yaml: Self.frontYAML, options: ServiceOptions(upstream: UpstreamOptions(url: Self.url(upstream))))

        let connection = try front.connect()
        try connection.sendRequest("POST", "/orders/lost", headers: [("Content-Type", "application/json")], body: Array(#"{"amount":5}"#.utf8))
        let (bytes, end) = try connection.readUntilEnd()
        #expect(bytes.isEmpty && end == .failed(errno: ECONNRESET), "\(bytes.count) bytes, then \(end)")
        // The order reached the upstream, which answered: only the client never saw it.
        let reached = try #require(Self.received(upstream).last)
        #expect(reached.method == "POST" && reached.path == "/orders/lost" && reached.body == Array(#"{"amount":5}"#.utf8))
        let entry = try #require(front.service.journal.entries().entries.last)
        #expect(entry.rule == "lostAnswer" && entry.fault == .reset)
        #expect(entry.upstream == Self.url(upstream) && entry.status == 201 && entry.upstreamMilliseconds != nil)
    }

    @Test func aDelayIsAddedToTheUpstreamsAnswer() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let front = try TestServer(yaml: Self.frontYAML, options: ServiceOptions(upstream: UpstreamOptions(url: Self.url(upstream))))
        let started = ContinuousClock.now
        let slow = try await front.send("POST", "/orders/slow")
        let took = ContinuousClock.now - started
        #expect(slow.status == 201 && slow.json?["id"] as? String == "slow" && slow.header("X-Upstream") == "yes")
        #expect(took >= .milliseconds(700), "answered after \(took)")
        // The upstream heard of it before the delay ran out, not after.
        #expect(Self.received(upstream).map(\.path) == ["/orders/slow"])
    }

    @Test func theRulesHeadersReplaceTheUpstreamsOfTheSameName() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let front = try TestServer(yaml: Self.frontYAML, options: ServiceOptions(upstream: UpstreamOptions(url: Self.url(upstream))))
        let answer = try front.sendRaw("POST", "/orders/hint")
        #expect(answer.status == 201 && answer.json?["state"] as? String == "paid")
        #expect(answer.header("Retry-After") == "3" && answer.header("X-Upstream") == "yes")
        // One Cache-Control, the rule's (a raw read joins repeated fields with ", ").
        #expect(answer.header("Cache-Control") == "max-age=60")
    }

    @Test func otherRoutesPassThroughUntouched() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let front = try TestServer(yaml: Self.frontYAML, options: ServiceOptions(upstream: UpstreamOptions(url: Self.url(upstream))))
        // Same endpoint, no rule claims id 9; another method, no endpoint at all.
        for method in ["POST", "PUT"] {
            let answer = try await front.send(method, "/orders/9")
            #expect(answer.status == 201 && answer.header("Cache-Control") == "no-store", "\(method)")
        }
        #expect(front.service.journal.entries().entries.allSatisfy { $0.rule == nil && $0.status == 201 })
    }

    @Test func garbageWithAnEmptyUpstreamBodySendsRandomBytes() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let front = try TestServer(yaml: Self.frontYAML, options: ServiceOptions(upstream: UpstreamOptions(url: Self.url(upstream))))
        let connection = try front.connect()
        try connection.sendRequest("GET", "/empty")
        let (bytes, _) = try connection.readUntilEnd()
        #expect(!bytes.isEmpty && !bytes.starts(with: Array("HTTP/".utf8)))
        #expect(Self.received(upstream).map(\.path) == ["/empty"])
    }

    @Test func aRuleNamesItsOwnUpstreamWithoutTheServerHavingOne() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let yaml = """
            endpoint: GET /orders/{id}
            rules:
              - { name: real, respond: { proxy: "\(Self.url(upstream))/", headers: { X-Via: front } } }
            """
        let front = try TestServer(yaml: yaml)
        let answer = try await front.send("GET", "/orders/12?expand=items")
        #expect(answer.status == 201 && answer.json?["id"] as? String == "12" && answer.header("X-Via") == "front")
        let reached = try #require(Self.received(upstream).last)
        #expect(reached.path == "/orders/12" && reached.query.map(\.name) == ["expand"])
        // A path no rule answers is still the front's 404: it has no upstream of its own.
        #expect(try await front.send("GET", "/elsewhere").status == 404)
    }

    @Test func proxyUpstreamWithoutAnUpstreamIsA502ThatSaysSo() async throws {
        let front = try TestServer(yaml: "endpoint: GET /a\nrules:\n  - { name: passOn, respond: { proxy: upstream } }\n")
        let answer = try await front.send("GET", "/a")
        #expect(answer.status == 502)
        let reason = try #require(answer.json?["reason"] as? String)
        #expect(reason.contains("rule 'passOn' of GET /a") && reason.contains("without --upstream"), "\(reason)")
        #expect(front.service.journal.entries().entries.last?.rule == "passOn")
    }

    @Test func aRuntimeRuleBreaksOneSessionsRouteOnly() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let front = try TestServer(yaml: "endpoints: []\n", options: ServiceOptions(upstream: UpstreamOptions(url: Self.url(upstream))))
        let rule = "endpoint: GET /orders/{id}\nrules:\n  - { name: lost, respond: { proxy: upstream, fault: close } }\n"
        let added = try await front.send("POST", "/__mishap/rules?session=broken", body: Data(rule.utf8))
        #expect(added.status == 201, "\(added.text)")

        let connection = try front.connect()
        try connection.sendRequest("GET", "/orders/1", headers: [("X-Mishap-Session", "broken")])
        let (bytes, end) = try connection.readUntilEnd()
        #expect(bytes.isEmpty && end == .closed)
        let fine = try await front.send("GET", "/orders/2", headers: ["X-Mishap-Session": "other"])
        #expect(fine.status == 201)
        #expect(Self.received(upstream).map(\.path) == ["/orders/1", "/orders/2"])
    }

    @Test func anUpstreamThatIsDownGetsTheRulesDeliveryOnIts502() async throws {
        let closed = try TestServer(yaml: "endpoints: []\n")
        let gone = Self.url(closed)
        closed.instance.stop()
        let yaml = "endpoint: GET /a\nrules:\n  - { name: slowGone, respond: { proxy: \"\(gone)\", headers: { X-Rule: slowGone } } }\n"
        let front = try TestServer(yaml: yaml)
        let answer = try await front.send("GET", "/a")
        #expect(answer.status == 502 && answer.header("X-Rule") == "slowGone")
        #expect((answer.json?["reason"] as? String)?.contains("unreachable") == true)
    }
}
