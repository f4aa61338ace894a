import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// `--cors` in front of an upstream that sends CORS headers of its own: an allowed origin gets
/// exactly one `Access-Control-Allow-Origin`, Mishap's (two make browsers fail the request),
/// and one `Access-Control-Allow-Credentials`; an origin Mishap does not allow gets the
/// upstream's answer as it came.
@Suite(.onBlockingThreads, .serialized) struct UpstreamCORSTests {
    static let app = "http://app.test:3000"

    /// An upstream with CORS headers for its production front-end.
    static func upstream() throws -> ScriptedUpstream {
        try ScriptedUpstream(rawHead: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + "Access-Control-Allow-Origin: https://prod.example\r\nAccess-Control-Allow-Credentials: true\r\n"
            + "Access-Control-Expose-Headers: X-Prod\r\nVary: Accept-Encoding\r\nX-Data: 1\r\n"
            + "Content-Length: 2\r\nConnection: close\r\n\r\n", body: Array("{}".utf8))
    }

    static func front(_ upstream: ScriptedUpstream, cors: CORSPolicy) throws -> TestServer {
        try TestServer(yaml: """
            endpoint: GET /ruled
            rules:
              - { name: viaRule, respond: { proxy: "\(upstream.url())", headers: { X-Rule: "1" } } }
            """, options: ServiceOptions(cors: cors, upstream: UpstreamOptions(url: upstream.url(), timeoutMilliseconds: 10_000)))
    }

    /// Each header line of a raw response, as sent (names in any case).
    static func lines(_ server: TestServer, _ path: String, origin: String) throws -> [(name: String, value: String)] {
        let connection = try server.connect()
        try connection.sendRequest("GET", path, headers: [("Origin", origin), ("Connection", "close")])
        let text = String(decoding: try connection.readToEnd(), as: UTF8.self)
        let head = text.components(separatedBy: "\r\n\r\n").first ?? ""
        return head.components(separatedBy: "\r\n").dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]).lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
    }

    static func values(_ lines: [(name: String, value: String)], _ name: String) -> [String] {
        lines.filter { $0.name == name.lowercased() }.map(\.value)
    }

    @Test(arguments: ["/passed", "/ruled"])
    func aListedOriginGetsMishapsHeadersOnly(path: String) throws {
        let upstream = try Self.upstream()
        let front = try Self.front(upstream, cors: CORSPolicy(origins: .listed([Self.app])))
        let lines = try Self.lines(front, path, origin: Self.app)
        #expect(Self.values(lines, "Access-Control-Allow-Origin") == [Self.app], "\(lines)")
        #expect(Self.values(lines, "Access-Control-Allow-Credentials") == ["true"])
        let exposed = Self.values(lines, "Access-Control-Expose-Headers")
        #expect(exposed.count == 1 && exposed.first?.contains("X-Data") == true, "\(exposed)")
        #expect(Self.values(lines, "X-Data") == ["1"])
    }

    @Test func anyOriginGetsOneStarAndNoCredentials() throws {
        let upstream = try Self.upstream()
        let front = try Self.front(upstream, cors: CORSPolicy(origins: .any))
        let lines = try Self.lines(front, "/passed", origin: Self.app)
        #expect(Self.values(lines, "Access-Control-Allow-Origin") == ["*"], "\(lines)")
        #expect(Self.values(lines, "Access-Control-Allow-Credentials").isEmpty)
    }

    @Test func anOriginMishapDoesNotAllowGetsTheUpstreamsAnswer() throws {
        let upstream = try Self.upstream()
        let front = try Self.front(upstream, cors: CORSPolicy(origins: .listed([Self.app])))
        let lines = try Self.lines(front, "/passed", origin: "https://prod.example")
        #expect(Self.values(lines, "Access-Control-Allow-Origin") == ["https://prod.example"], "\(lines)")
        #expect(Self.values(lines, "Access-Control-Expose-Headers") == ["X-Prod"])
    }
}
