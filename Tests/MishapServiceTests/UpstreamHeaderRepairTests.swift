import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// What an upstream sends that HTTP/1.1 no longer allows (RFC 9112): a header folded over two
/// lines (obs-fold), a bare CR in a value, and a `101 Switching Protocols` Mishap never asked
/// for. Folds and stray control characters are made into spaces, a broken header line is left
/// out, a 1xx final answer is refused with 502; each is said in the journal (`upstreamNote`)
/// and logged as a warning, never passed on changed without a word.
@Suite(.onBlockingThreads, .serialized) struct UpstreamHeaderRepairTests {
    static func front(_ upstream: ScriptedUpstream) throws -> TestServer {
        try TestServer(yaml: "endpoint: GET /local\nrules: [{ name: local, respond: { text: here } }]\n",
                       options: ServiceOptions(upstream: UpstreamOptions(url: upstream.url(), timeoutMilliseconds: 10_000)))
    }

    /// The journal's note on the last request, once the upstream has answered.
    static func note(_ front: TestServer) async throws -> String? {
        var note: String?
        _ = await eventually {
            let entry = front.service.journal.entries().entries.last
            note = entry?.upstreamNote
            return entry?.upstreamMilliseconds != nil
        }
        return note
    }

    @Test func aFoldedHeaderIsUnfoldedAndSaidSo() async throws {
        let upstream = try ScriptedUpstream(rawHead: "HTTP/1.1 200 OK\r\nX-Folded: first\r\n   second\r\n\tthird\r\n"
            + "X-After: yes\r\nContent-Length: 2\r\nConnection: close\r\n\r\n", body: Array("ok".utf8))
        let front = try Self.front(upstream)
        let answer = try front.sendRaw("GET", "/folded")
        #expect(answer.status == 200 && answer.text == "ok")
        #expect(answer.header("X-Folded") == "first second third", "\(answer.headers)")
        #expect(answer.header("X-After") == "yes")
        let note = try await Self.note(front)
        #expect(note?.contains("X-Folded") == true && note?.contains("folded") == true, "\(String(describing: note))")
    }

    @Test func aBareCRIsASpaceAndSaidSo() async throws {
        let upstream = try ScriptedUpstream(rawHead: "HTTP/1.1 200 OK\r\nX-CR: a\rb\r\nX-Plain: p\r\nContent-Length: 2\r\nConnection: close\r\n\r\n",
                                            body: Array("ok".utf8))
        let front = try Self.front(upstream)
        let connection = try front.connect()
        try connection.sendRequest("GET", "/cr", headers: [("Connection", "close")])
        let raw = String(decoding: try connection.readToEnd(), as: UTF8.self)
        #expect(raw.contains("X-CR: a b\r\n"), "\(raw)")
        #expect(!raw.contains("a\rb"), "\(raw)")
        #expect(raw.contains("X-Plain: p\r\n"))
        let note = try await Self.note(front)
        #expect(note?.contains("X-CR") == true && note?.contains("CR") == true, "\(String(describing: note))")
    }

    /// Whitespace before a colon is removed (RFC 9112 section 5.1 tells a proxy to); a line
    /// whose name is not a header name is left out.
    @Test func aBrokenHeaderNameIsMendedOrLeftOut() async throws {
        let upstream = try ScriptedUpstream(rawHead: "HTTP/1.1 200 OK\r\nX-Spaced : v\r\nX(Bad): w\r\nX-Good: g\r\n"
            + "Content-Length: 2\r\nConnection: close\r\n\r\n", body: Array("ok".utf8))
        let front = try Self.front(upstream)
        let answer = try front.sendRaw("GET", "/broken")
        #expect(answer.status == 200 && answer.header("X-Good") == "g")
        #expect(answer.header("X-Spaced") == "v", "\(answer.headers)")
        #expect(!answer.headers.keys.contains { $0.contains("Bad") || $0.hasSuffix(" ") }, "\(answer.headers)")
        let note = try await Self.note(front)
        #expect(note?.contains("X-Spaced") == true && note?.contains("left out") == true, "\(String(describing: note))")
    }

    /// What libcurl refuses itself (a line without a colon, a NUL byte) is answered 502 saying why.
    @Test(arguments: ["not a header\r\n", "X-Nul: a\u{0}b\r\n"])
    func whatLibcurlRefusesIs502(line: String) async throws {
        let upstream = try ScriptedUpstream(rawHead: "HTTP/1.1 200 OK\r\n\(line)Content-Length: 2\r\nConnection: close\r\n\r\n",
                                            body: Array("ok".utf8))
        let front = try Self.front(upstream)
        let answer = try front.sendRaw("GET", "/refused")
        #expect(answer.status == 502, "\(answer.status) \(answer.text)")
        let reason = answer.json?["reason"] as? String ?? ""
        #expect(reason.contains("colon") || reason.contains("Nul"), "\(reason)")
    }

    /// libcurl ends a call whose last answer is `101` without `Upgrade` with that answer:
    /// passed on, the client would take the connection for another protocol's.
    @Test func aSwitchOfProtocolsIsRefused() async throws {
        let upstream = try ScriptedUpstream { _ in [(0, Array("HTTP/1.1 101 Switching Protocols\r\n\r\nnot http any more".utf8)), (300, [])] }
        let front = try Self.front(upstream)
        let answer = try front.sendRaw("GET", "/switch")
        #expect(answer.status == 502, "\(answer.status) \(answer.text)")
        let reason = answer.json?["reason"] as? String ?? ""
        #expect(reason.contains("101") && reason.contains("final"), "\(reason)")
        let note = try await Self.note(front)
        #expect(note?.contains("101") == true, "\(String(describing: note))")
        #expect(try await front.send("GET", "/local").text == "here")
        // With Upgrade, libcurl takes the 101 for an interim answer and waits for a final one:
        // none comes, and that is a 502 too.
        let upgrading = try ScriptedUpstream { _ in
            [(0, Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8)), (300, [])]
        }
        let second = try Self.front(upgrading)
        #expect(try second.sendRaw("GET", "/switch").status == 502)
    }

    /// An interim answer before the final one (`103 Early Hints`) is not passed on; the final
    /// one is, with no note.
    @Test func anInterimAnswerBeforeTheFinalOneIsLeftOut() async throws {
        let upstream = try ScriptedUpstream(rawHead: "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nX-Final: 1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n", body: Array("ok".utf8))
        let front = try Self.front(upstream)
        let answer = try front.sendRaw("GET", "/hints")
        #expect(answer.status == 200 && answer.text == "ok" && answer.header("X-Final") == "1" && answer.header("Link") == nil)
        #expect(try await Self.note(front) == nil)
    }

    /// A clean answer has no note.
    @Test func aCleanAnswerHasNoNote() async throws {
        let upstream = try ScriptedUpstream(rawHead: "HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        let front = try Self.front(upstream)
        #expect(try front.sendRaw("GET", "/clean").status == 200)
        #expect(try await Self.note(front) == nil)
        let journal = try await front.send("GET", "/__mishap/requests?path=/clean")
        let entry = (journal.json?["requests"] as? [[String: Any]])?.first
        #expect(entry?.keys.contains("upstreamNote") == true, "\(journal.text)")
    }
}
