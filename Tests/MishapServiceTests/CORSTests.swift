import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// `--cors`: browsers' preflights are answered for every path the scenarios serve, and answers to
/// an allowed origin carry what a page's script needs to read them, credentials included; other
/// origins get nothing; off, nothing changes. Over raw sockets, as a browser sends them.
@Suite(.onBlockingThreads) struct CORSTests {
    static let app = "http://app.test:3000"

    static func server(_ cors: CORSPolicy?) throws -> TestServer {
        try TestServer(options: ServiceOptions(cors: cors))
    }

    static func preflight(_ server: TestServer, _ path: String, origin: String = app, method: String = "POST",
                          headers: String? = "content-type, x-mishap-session") throws -> ClientResponse {
        var fields = [("Origin", origin), ("Access-Control-Request-Method", method)]
        if let headers { fields.append(("Access-Control-Request-Headers", headers)) }
        return try server.sendRaw("OPTIONS", path, headers: fields)
    }

    @Test func preflightsOfAllowedOriginsAreAnswered() throws {
        let server = try Self.server(CORSPolicy(origins: .listed([Self.app])))
        let login = try Self.preflight(server, "/login")
        #expect(login.status == 204)
        #expect(login.header("Access-Control-Allow-Origin") == Self.app)
        #expect(login.header("Access-Control-Allow-Methods") == "POST")
        #expect(login.header("Access-Control-Allow-Headers") == "content-type, x-mishap-session")
        #expect(login.header("Access-Control-Allow-Credentials") == "true")
        #expect(login.header("Access-Control-Max-Age") == "600")
        #expect(login.header("Vary")?.contains("Origin") == true)
        let get = try Self.preflight(server, "/isUserNameAvailable?userName=x", method: "GET", headers: nil)
        #expect(get.status == 204 && get.header("Access-Control-Allow-Methods") == "GET, HEAD")
        #expect(get.header("Access-Control-Allow-Headers") == nil)
        // Nothing was answered by a rule: the preflight is the server's, not the scenarios'.
        #expect(server.service.journal.entries().entries.allSatisfy { $0.rule == nil })
    }

    @Test func otherOriginsGetNoCORSHeaders() throws {
        let server = try Self.server(CORSPolicy(origins: .listed([Self.app])))
        let refused = try Self.preflight(server, "/login", origin: "http://evil.test")
        #expect(refused.status == 403)
        #expect(refused.header("Access-Control-Allow-Origin") == nil)
        let answer = try server.sendRaw("GET", "/isUserNameAvailable?userName=someone", headers: [("Origin", "http://evil.test")])
        #expect(answer.status == 200)
        #expect(answer.header("Access-Control-Allow-Origin") == nil && answer.header("Access-Control-Allow-Credentials") == nil)
        // A path no endpoint serves: the preflight gets the 404 any request there gets.
        let nowhere = try Self.preflight(server, "/nowhere")
        #expect(nowhere.status == 404)
    }

    @Test func answersToAllowedOriginsCarryTheHeadersAScriptNeeds() throws {
        let server = try Self.server(CORSPolicy(origins: .listed([Self.app, "http://localhost:5173"])))
        // A credentialed request, as fetch(url, { credentials: "include" }) sends it.
        let limited = try server.sendRaw("GET", "/isUserNameAvailable?userName=ratelimited",
                                         headers: [("Origin", Self.app), ("Cookie", "session=abc")])
        #expect(limited.status == 429)
        #expect(limited.header("Access-Control-Allow-Origin") == Self.app)
        #expect(limited.header("Access-Control-Allow-Credentials") == "true")
        #expect(limited.header("Vary") == "Origin")
        #expect(limited.header("Access-Control-Expose-Headers") == "Retry-After")
        #expect(limited.header("Retry-After") == "30")
        let unauthorized = try server.sendRaw("POST", "/login", headers: [("Origin", "http://localhost:5173"), ("Content-Type", "application/json")],
                                              body: Array(#"{"email":"unauthorized@x.com","password":"secret"}"#.utf8))
        #expect(unauthorized.status == 401)
        #expect(unauthorized.header("Access-Control-Allow-Origin") == "http://localhost:5173")
        #expect(unauthorized.header("Access-Control-Expose-Headers") == "WWW-Authenticate")
        let head = try server.sendRaw("HEAD", "/isUserNameAvailable?userName=someone", headers: [("Origin", Self.app)])
        #expect(head.status == 200 && head.header("Access-Control-Allow-Origin") == Self.app)
        // Without an Origin (not a browser's cross-origin request): no CORS headers.
        let plain = try server.sendRaw("GET", "/isUserNameAvailable?userName=someone")
        #expect(plain.header("Access-Control-Allow-Origin") == nil)
    }

    @Test func anyOriginIsAStarWithoutCredentials() throws {
        let server = try Self.server(CORSPolicy(origins: .any))
        let answer = try server.sendRaw("GET", "/isUserNameAvailable?userName=someone", headers: [("Origin", "http://anything.test")])
        #expect(answer.header("Access-Control-Allow-Origin") == "*")
        #expect(answer.header("Access-Control-Allow-Credentials") == nil)
        let preflight = try Self.preflight(server, "/login", origin: "http://anything.test")
        #expect(preflight.status == 204 && preflight.header("Access-Control-Allow-Origin") == "*")
        #expect(preflight.header("Access-Control-Allow-Credentials") == nil)
    }

    @Test func faultsStillBreakTheConnection() throws {
        let server = try Self.server(CORSPolicy(origins: .any))
        let connection = try RawHTTPConnection(port: server.port, timeoutSeconds: 5)
        _ = connection.write(Array("GET /isUserNameAvailable?userName=reset HTTP/1.1\r\nHost: x\r\nOrigin: http://a.test\r\n\r\n".utf8))
        var received: [UInt8] = []
        let end = connection.read(into: &received, until: .now + .seconds(5))
        #expect(end == .reset && received.isEmpty, "\(end): \(received.count) bytes")
    }

    @Test func offMeansNoPreflightAnswer() throws {
        let server = try Self.server(nil)
        let preflight = try Self.preflight(server, "/login")
        #expect(preflight.status == 404)
        #expect(preflight.header("Access-Control-Allow-Origin") == nil)
    }

    @Test func originsAreParsedStrictly() throws {
        #expect(try CORSPolicy(parsing: "*") == CORSPolicy(origins: .any))
        #expect(try CORSPolicy(parsing: "http://a.test, https://b.test:8443") == CORSPolicy(origins: .listed(["http://a.test", "https://b.test:8443"])))
        for bad in ["", "a.test", "http://a.test/path", "*, http://a.test", "ftp://a.test"] {
            #expect(throws: CORSPolicyError.self, "\(bad)") { try CORSPolicy(parsing: bad) }
        }
    }
}
