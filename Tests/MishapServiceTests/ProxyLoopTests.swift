import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// A `proxy` or `--upstream` that leads back to Mishap: refused before anything is sent when
/// the URL is the server's own address and port (508, or a refused runtime rule), and caught
/// by this instance's `Via` token when it comes back another way (through a second Mishap
/// here); the admin API never answers a request that came back.
@Suite(.onBlockingThreads, .serialized) struct ProxyLoopTests {
    static func rule(_ url: String) -> String {
        "endpoint: GET /loop\nrules:\n  - { name: back, respond: { proxy: \"\(url)\" } }\n"
    }

    /// A rule file naming the server's own port cannot know it before it starts: the request is
    /// answered 508 at once, nothing is sent, and the connections stay free.
    @Test(arguments: ["http://127.0.0.1:PORT", "http://localhost:PORT/base", "http://[::1]:PORT", "http://127.0.0.5:PORT"])
    func aRuleNamingTheServersOwnPortIs508(template: String) async throws {
        // Started first with a placeholder rule, then the rule is added at runtime past the
        // check, as a reload of a file would bring it.
        let server = try TestServer(yaml: "endpoint: GET /x\nrules: [{ name: x, respond: { text: x } }]\n")
        let url = template.replacingOccurrences(of: "PORT", with: String(server.port))
        try server.service.reload(yaml: Self.rule(url))
        let answer = try server.sendRaw("GET", "/loop")
        #expect(answer.status == 508, "\(answer.status) \(answer.text)")
        let reason = answer.json?["reason"] as? String ?? ""
        #expect(reason.contains("points at this Mishap itself"), "\(reason)")
        let entries = server.service.journal.entries().entries
        #expect(entries.count == 1 && entries.first?.status == 508 && entries.first?.rule == "back", "\(entries.map(\.path))")
    }

    /// Added at runtime, such a rule is refused where it is written.
    @Test func aRuntimeRuleNamingTheServerIsRefused() async throws {
        let server = try TestServer(yaml: "endpoint: GET /x\nrules: [{ name: x, respond: { text: x } }]\n")
        let added = try await server.send("POST", "/__mishap/rules", body: Data(Self.rule("http://localhost:\(server.port)/api").utf8))
        #expect(added.status == 422, "\(added.text)")
        #expect(added.text.contains("points at this Mishap itself") && added.text.contains("body:3:"), "\(added.text)")
        #expect(server.service.runtime.list(now: 0).isEmpty)
        // Another port of this machine is another server: accepted.
        let other = try await server.send("POST", "/__mishap/rules", body: Data(Self.rule("http://127.0.0.1:9").utf8))
        #expect(other.status == 201, "\(other.text)")
    }

    /// A loop the address cannot show: A proxies to B, B's `--upstream` is A. The request comes
    /// back to A carrying A's `Via` token and is answered 508, which travels back; one round only.
    @Test func aLoopThroughAnotherServerEndsAtTheFirstReturn() async throws {
        let a = try TestServer(yaml: "endpoint: GET /x\nrules: [{ name: x, respond: { text: x } }]\n")
        let b = try TestServer(yaml: "endpoint: GET /b\nrules: [{ name: b, respond: { text: b } }]\n",
                               options: ServiceOptions(upstream: UpstreamOptions(url: "http://127.0.0.1:\(a.port)", timeoutMilliseconds: 10_000)))
        try a.service.reload(yaml: Self.rule("http://127.0.0.1:\(b.port)"))
        let answer = try a.sendRaw("GET", "/loop")
        #expect(answer.status == 508, "\(answer.status) \(answer.text)")
        #expect((answer.json?["reason"] as? String)?.contains("came back to the Mishap that sent it on") == true, "\(answer.text)")
        let seenByA = a.service.journal.entries().entries
        #expect(seenByA.count == 2, "\(seenByA.map { "\($0.path) \(String(describing: $0.status))" })")
        #expect(b.service.journal.entries().entries.count == 1)
    }

    /// What came back through Mishap's own proxying never reaches the admin API, whatever its
    /// path: a page that can make Mishap proxy to itself cannot read the journal through it.
    @Test func theAdminAPIRefusesWhatCameBack() async throws {
        let upstream = try ScriptedUpstream(rawHead: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        let server = try TestServer(yaml: Self.rule(upstream.url()))
        #expect(try server.sendRaw("GET", "/loop").status == 200)
        let via = try #require(upstream.requests.last?.header("Via"))
        #expect(via.hasPrefix("1.1 mishap-"), "\(via)")
        for path in ["/__mishap/requests", "/__mishap/health", "/x"] {
            let back = try server.sendRaw("GET", path, headers: [("Via", "1.0 other, \(via)")])
            #expect(back.status == 508, "\(path): \(back.status)")
        }
        // A request through another Mishap (another token) is answered as usual.
        #expect(try server.sendRaw("GET", "/__mishap/health", headers: [("Via", "1.1 mishap-0000000000000000")]).status == 200)
    }

    /// A request that has passed many proxies is not sent on again.
    @Test func hopsAreBounded() throws {
        let upstream = try ScriptedUpstream(rawHead: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        let server = try TestServer(yaml: Self.rule(upstream.url()))
        let many = (1...16).map { "1.1 proxy\($0)" }.joined(separator: ", ")
        let answer = try server.sendRaw("GET", "/loop", headers: [("Via", many)])
        #expect(answer.status == 508, "\(answer.text)")
        #expect(upstream.requests.isEmpty)
        let fewer = (1...15).map { "1.1 proxy\($0)" }.joined(separator: ", ")
        #expect(try server.sendRaw("GET", "/loop", headers: [("Via", fewer)]).status == 200)
    }
}
