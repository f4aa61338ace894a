import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import MishapTLS
import Testing

/// `--upstream https://...` with `--upstream-ca`: the upstream is a second Mishap serving HTTPS
/// from a local certificate authority made for the test (as `mishap serve --tls-port` does), and
/// its TLS failure catalogue's bad certificates. With the CA trusted its answers pass through;
/// without it, or with a certificate the CA does not vouch for, the client gets a 502 that says
/// `tls`, and the upstream never sees the request.
@Suite(.onBlockingThreads, .serialized) struct UpstreamTLSTests {
    /// The HTTPS upstream's scenarios: answers by path, the rule's own URL under `/v2`.
    static let upstreamYAML = """
        endpoints:
          - endpoint: ANY /things/{id}
            rules:
              - name: thing
                respond:
                  status: 201
                  headers: { X-Upstream: "yes" }
                  json: { id: "{{path.id}}", from: secure }
          - endpoint: GET /v2/orders/{id}
            rules:
              - name: order
                respond: { json: { order: "{{path.id}}" } }
        """

    /// The front: a local rule, and a rule that proxies to a URL of its own (the upstream's `/v2`).
    static func frontYAML(ruleUpstream: String) -> String {
        """
        endpoints:
          - endpoint: GET /login
            rules:
              - name: localLogin
                respond: { text: local login }
          - endpoint: GET /orders/{id}
            rules:
              - name: ownURL
                respond: { proxy: "\(ruleUpstream)/v2", headers: { X-Via: ownURL } }
        """
    }

    /// A Mishap serving `upstreamYAML` over HTTPS from a new local CA, with the catalogue's
    /// certificate failures that the CA's trust must not excuse. Stopped when released.
    final class SecureUpstream: Sendable {
        let folder: TemporaryFolder
        let instance: MishapInstance
        /// The CA's certificate, as `--upstream-ca` takes it (`ca.pem` of `mishap tls init`).
        let caFile: String
        /// The HTTPS port.
        let port: UInt16

        init() throws {
            folder = try TemporaryFolder()
            let now = Int(Date().timeIntervalSince1970)
            let authority = try CertificateAuthority.create(directory: folder.path + "/ca", now: now)
            let names = ["localhost", "127.0.0.1"]
            let catalogue = try TLSCatalogue.make(authority: authority, names: names, now: now)
                .filter { [.wrongHost, .expired, .untrustedRoot].contains($0.0) }
            caFile = authority.path(CertificateAuthority.certificateFile)
            let tls = TLSOptions(port: 0, identity: try authority.issueServerIdentity(names: names, now: now),
                                 caCertificatePath: caFile, catalogue: catalogue)
            instance = try MishapInstance.start(MishapInstance.Configuration(
                scenarios: .yaml(UpstreamTLSTests.upstreamYAML, name: "secure.yaml"), server: TestServer.configuration, tls: tls),
                logger: quietLogger)
            let listing = try #require(instance.tls)
            port = try #require(URLComponents(string: listing.url)?.port.flatMap { UInt16(exactly: $0) }, "\(listing.url)")
        }

        deinit { instance.stop() }

        /// The HTTPS URL under `host` (`127.0.0.1` or `localhost`: the certificate names both).
        func url(host: String = "127.0.0.1") -> String { "https://\(host):\(port)" }

        /// The URL of a catalogue failure's port.
        func url(of failure: TLSFailure) throws -> String {
            try #require(instance.tls?.failures.first { $0.failure == failure }?.url)
        }

        /// The requests that reached it (over HTTPS or the catalogue's ports), oldest first.
        var received: [JournalEntry] { instance.service.journal.entries().entries }
    }

    /// A front Mishap whose upstream is `url`, trusting `caFile` when given.
    static func front(upstream url: String, caFile: String?, ruleUpstream: String? = nil) throws -> TestServer {
        try TestServer(yaml: frontYAML(ruleUpstream: ruleUpstream ?? url),
                       options: ServiceOptions(upstream: UpstreamOptions(url: url, timeoutMilliseconds: 10_000, caFile: caFile)))
    }

    /// The `reason` of a JSON error answer.
    static func reason(_ answer: ClientResponse) -> String { answer.json?["reason"] as? String ?? answer.text }

    @Test("With --upstream-ca an HTTPS upstream's answer passes through", arguments: ["127.0.0.1", "localhost"])
    func passesThroughWithTheCA(host: String) async throws {
        let upstream = try SecureUpstream()
        let front = try Self.front(upstream: upstream.url(host: host), caFile: upstream.caFile)

        let body = Data(#"{"name":"café"}"#.utf8)
        let answer = try await front.send("POST", "/things/7?q=1", body: body, headers: ["Content-Type": "application/json"])
        #expect(answer.status == 201, "\(answer.status) \(answer.text)")
        #expect(answer.header("X-Upstream") == "yes")
        #expect(answer.json?["id"] as? String == "7" && answer.json?["from"] as? String == "secure")
        let reached = try #require(upstream.received.last)
        #expect(reached.method == "POST" && reached.path == "/things/7" && reached.body == Array(body))
        let headers = Dictionary(reached.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(headers["host"] == "\(host):\(upstream.port)")
        // The client spoke plain HTTP to the front.
        #expect(headers["x-forwarded-proto"] == "http")
        // A rule still answers without the upstream.
        #expect(try await front.send("GET", "/login").text == "local login")
        #expect(upstream.received.count == 1)
        let entry = try #require(front.service.journal.entries().entries.first)
        #expect(entry.upstream == upstream.url(host: host) && entry.status == 201)
    }

    @Test func withoutTheCAItIsA502SayingTLS() async throws {
        let upstream = try SecureUpstream()
        let front = try Self.front(upstream: upstream.url(), caFile: nil)
        let answer = try await front.send("GET", "/things/1")
        #expect(answer.status == 502)
        #expect(answer.header("Content-Type") == "application/json; charset=utf-8")
        let reason = Self.reason(answer)
        #expect(reason.contains(upstream.url()) && reason.contains("(tls)"), "\(reason)")
        // The handshake failed: no request reached the upstream.
        #expect(upstream.received.isEmpty)
        #expect(front.service.journal.entries().entries.last?.status == 502)
    }

    /// The CA is trusted for what it vouches for only: a certificate for another name, an
    /// expired one from the same CA, or one from another CA are refused all the same.
    @Test("The CA excuses no bad certificate", arguments: [TLSFailure.wrongHost, .expired, .untrustedRoot])
    func badCertificatesAreRefusedWithTheCA(failure: TLSFailure) async throws {
        let upstream = try SecureUpstream()
        let front = try Self.front(upstream: try upstream.url(of: failure), caFile: upstream.caFile)
        let answer = try await front.send("GET", "/things/1")
        #expect(answer.status == 502, "\(failure.rawValue): \(answer.status) \(answer.text)")
        #expect(Self.reason(answer).contains("(tls)"), "\(failure.rawValue): \(Self.reason(answer))")
        #expect(upstream.received.isEmpty, "\(failure.rawValue)")
    }

    @Test func aCAFileThatCannotBeReadIsA502SayingTLS() async throws {
        let upstream = try SecureUpstream()
        let front = try Self.front(upstream: upstream.url(), caFile: upstream.folder.path + "/missing.pem")
        let answer = try await front.send("GET", "/things/1")
        #expect(answer.status == 502 && Self.reason(answer).contains("(tls)"), "\(answer.status) \(Self.reason(answer))")
    }

    /// A rule's `proxy: https://...` uses the CA of `--upstream-ca` too; without it, the system's.
    @Test func aRulesOwnHTTPSURLUsesTheUpstreamCA() async throws {
        let upstream = try SecureUpstream()
        // The server's upstream and the rule's own URL differ (another host name, a path prefix).
        let front = try Self.front(upstream: upstream.url(), caFile: upstream.caFile, ruleUpstream: upstream.url(host: "localhost"))
        let answer = try await front.send("GET", "/orders/5")
        #expect(answer.status == 200 && answer.json?["order"] as? String == "5", "\(answer.status) \(answer.text)")
        #expect(answer.header("X-Via") == "ownURL")
        let reached = try #require(upstream.received.last)
        #expect(reached.path == "/v2/orders/5")
        #expect(front.service.journal.entries().entries.last?.rule == "ownURL")

        let untrusting = try TestServer(yaml: Self.frontYAML(ruleUpstream: upstream.url(host: "localhost")))
        let refused = try await untrusting.send("GET", "/orders/6")
        #expect(refused.status == 502 && refused.header("X-Via") == "ownURL")
        #expect(Self.reason(refused).contains("(tls)"), "\(Self.reason(refused))")
        #expect(upstream.received.count == 1)

        // The CA alone, with no upstream of the server's own (`--upstream-ca` without `--upstream`).
        let ruleOnly = try TestServer(yaml: Self.frontYAML(ruleUpstream: upstream.url(host: "localhost")),
                                      options: ServiceOptions(upstream: UpstreamOptions(url: nil, caFile: upstream.caFile)))
        let trusted = try await ruleOnly.send("GET", "/orders/7")
        #expect(trusted.status == 200 && trusted.json?["order"] as? String == "7", "\(trusted.status) \(trusted.text)")
        #expect(try await ruleOnly.send("GET", "/elsewhere").status == 404)
        #expect(upstream.received.count == 2)
    }
}
