import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import MishapUpstream
import Synchronization
import Testing

/// The path an upstream gets: never above the base path of `--upstream` or of a rule's
/// `proxy`, whatever dot segments the client sent (plain or percent-encoded), and a request
/// through the session prefix arrives as the path it stands for, with its session as a header.
/// The upstream is a `ScriptedUpstream`, which keeps each request line exactly as sent.
@Suite(.onBlockingThreads, .serialized) struct UpstreamPathTests {
    /// Answers every request 200 `ok`.
    static func upstream() throws -> ScriptedUpstream {
        try ScriptedUpstream(rawHead: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n",
                             body: Array("ok".utf8))
    }

    /// A rule's own base (`/api/public`) for `/public/*`, and `--upstream` with `/base` for the rest.
    static func front(_ upstream: ScriptedUpstream, options: ServiceOptions = ServiceOptions()) throws -> TestServer {
        var options = options
        options.upstream = UpstreamOptions(url: upstream.url("/base"), timeoutMilliseconds: 10_000)
        return try TestServer(yaml: """
            endpoint: GET /public/*
            rules:
              - { name: public, respond: { proxy: "\(upstream.url("/api/public"))" } }
            """, options: options)
    }

    /// Dot segments, as sent and percent-encoded in every case, and an encoded slash beside
    /// them: after the client's path is decoded, none climbs out of the base.
    @Test(arguments: [
        "/public/../../../admin/secret",
        "/public/%2e%2e/%2e%2e/%2e%2e/admin/secret",
        "/public/%2E%2e/%2e%2E/admin/secret",
        "/public/..%2F..%2F..%2Fadmin/secret",
        "/public/.%2e/.%2e/admin/secret",
        "/public/%2e./%2e./admin/secret",
        "/public/./../../admin/secret",
    ])
    func dotSegmentsNeverLeaveTheBase(target: String) throws {
        let upstream = try Self.upstream()
        let front = try Self.front(upstream)
        let answer = try front.sendRaw("GET", target)
        #expect(answer.status == 200, "\(target): \(answer.status) \(answer.text)")
        let sent = try #require(upstream.requests.last, "\(target) reached no upstream")
        // `/public/../../../admin/secret` is `/admin/secret`: no rule's, so `--upstream`'s base.
        #expect(sent.target == "/base/admin/secret", "\(target) went to \(sent.target)")
        // The journal and the rules saw the path the request stands for.
        #expect(front.service.journal.entries().entries.last?.path == "/admin/secret")
    }

    /// Under a rule's base: a path that stays under `/public/` keeps its rule, and its dot
    /// segments are gone before the upstream sees it.
    @Test func dotSegmentsUnderTheRulesPathStayUnderItsBase() throws {
        let upstream = try Self.upstream()
        let front = try Self.front(upstream)
        let answer = try front.sendRaw("GET", "/public/a/%2e%2e/b/./c")
        #expect(answer.status == 200, "\(answer.text)")
        #expect(upstream.requests.last?.target == "/api/public/public/b/c")
        let entry = front.service.journal.entries().entries.last
        #expect(entry?.rule == "public" && entry?.path == "/public/b/c")
    }

    /// A request made in process (not read off a socket) with dot segments is still sent under
    /// the base: `Forwarding` removes them too.
    @Test(arguments: [
        ("/../../admin", "http://u:1/base/admin"),
        ("/a/../../..", "http://u:1/base/"),
        ("/a/./b", "http://u:1/base/a/b"),
        ("*", "http://u:1/base/*"),
    ])
    func forwardingKeepsThePathUnderTheBase(path: String, url: String) {
        let call = Forwarding.call(for: Request(method: "GET", path: path), upstream: "http://u:1/base", client: "127.0.0.1", scheme: "http")
        #expect(call.url == url)
    }

    /// `/__session/ID/PATH` reaches the upstream as `PATH` with the session header, as the rules
    /// see it, and `mishap record` is told of that request.
    @Test func theSessionPrefixIsNotSentOn() async throws {
        let upstream = try Self.upstream()
        let told = Mutex<[Request]>([])
        let front = try Self.front(upstream, options: ServiceOptions(upstreamAnswers: { request, _ in
            told.withLock { $0.append(request) }
        }))
        let answer = try front.sendRaw("GET", "/__session/test-42/things/7?x=1")
        #expect(answer.status == 200, "\(answer.text)")
        let sent = try #require(upstream.requests.last)
        #expect(sent.target == "/base/things/7?x=1")
        #expect(sent.header("X-Mishap-Session") == "test-42")
        let recorded = try #require(told.withLock { $0.last })
        #expect(recorded.path == "/things/7")
        #expect(recorded.headerValue("X-Mishap-Session") == "test-42")

        // Through a rule's proxy too; a session header the client also sent is the prefix's.
        let proxied = try front.sendRaw("GET", "/__session/s2/public/x", headers: [("X-Mishap-Session", "other")])
        #expect(proxied.status == 200)
        let viaRule = try #require(upstream.requests.last)
        #expect(viaRule.target == "/api/public/public/x")
        #expect(viaRule.headers.filter { $0.name.lowercased() == "x-mishap-session" }.map(\.value) == ["s2"])
    }
}
