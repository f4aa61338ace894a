import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// The admin API refuses what a web page in the developer's browser sends it: a change from
/// another origin (what `fetch(..., { mode: "no-cors" })` and a plain form send, headers as
/// Chromium writes them), and any call through a name other than a loopback one (DNS
/// rebinding). Requests without `Origin`, as curl and test runners send them, work as before.
/// Every request is written byte for byte on a raw socket, so `Host` is exactly what is sent.
@Suite(.onBlockingThreads) struct AdminRequestPolicyTests {
    static let yaml = """
        endpoint: GET /hello
        rules:
          - { name: hello, respond: { text: hi } }
        """
    /// A rule a page would add: as text, which a `no-cors` fetch may send without a preflight.
    static let rule = Array("endpoint: GET /hello\nrules:\n  - { name: evil, respond: { text: pwned } }\n".utf8)

    /// Sends a request exactly as written (`Host` among `headers`, or none), on its own connection.
    static func send(_ server: TestServer, _ method: String, _ target: String, headers: [(String, String)],
                     body: [UInt8] = [], version: String = "HTTP/1.1") throws -> ClientResponse {
        var head = "\(method) \(target) \(version)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "Connection: close\r\n\r\n"
        let connection = try server.connect()
        try connection.send(Array(head.utf8) + body)
        return try connection.readResponse()
    }

    /// The headers Chromium sends with a cross-site `fetch(url, { method: "POST", mode: "no-cors",
    /// body })` from `origin`.
    static func browserHeaders(host: String, origin: String, site: String) -> [(String, String)] {
        [("Host", host), ("Origin", origin), ("Content-Type", "text/plain;charset=UTF-8"), ("Sec-Fetch-Site", site),
         ("Sec-Fetch-Mode", "no-cors"), ("Sec-Fetch-Dest", "empty")]
    }

    static func options(_ policy: AdminRequestPolicy) -> ServiceOptions {
        var options = ServiceOptions()
        options.adminPolicy = policy
        return options
    }

    static func runtimeRuleCount(_ server: TestServer) -> Int { server.service.runtime.list(now: 0).count }

    @Test(arguments: [
        ("http://evil.example", "cross-site"),
        ("http://localhost:3000", "same-site"),      // another port of localhost: the same site
        ("http://127.0.0.1:9", "same-site"),
    ])
    func aChangeFromAnotherOriginIsRefused(origin: String, site: String) throws {
        let server = try TestServer(yaml: Self.yaml)
        let host = "127.0.0.1:\(server.port)"
        let added = try Self.send(server, "POST", "/__mishap/rules", headers: Self.browserHeaders(host: host, origin: origin, site: site),
                                  body: Self.rule)
        #expect(added.status == 403, "\(added.text)")
        #expect((added.json?["reason"] as? String)?.contains("--admin-origin") == true, "\(added.text)")
        #expect(Self.runtimeRuleCount(server) == 0)
        // Without the browser's Sec-Fetch-Site (an older browser): Origin alone refuses it.
        let older = try Self.send(server, "POST", "/__mishap/reset", headers: [("Host", host), ("Origin", origin)])
        #expect(older.status == 403, "\(older.text)")
        #expect(try Self.send(server, "GET", "/hello", headers: [("Host", host)]).text == "hi")
    }

    /// A form posted from a sandboxed frame or a `file:` page says `Origin: null`.
    @Test func originNullIsRefused() throws {
        let server = try TestServer(yaml: Self.yaml)
        _ = try Self.send(server, "GET", "/hello", headers: [("Host", "localhost")])
        let reset = try Self.send(server, "POST", "/__mishap/reset", headers: [
            ("Host", "127.0.0.1:\(server.port)"), ("Origin", "null"), ("Content-Type", "application/x-www-form-urlencoded"),
            ("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "navigate"),
        ])
        #expect(reset.status == 403, "\(reset.text)")
        #expect(server.service.journal.entries().entries.count == 1, "the journal was cleared")
        // Without Sec-Fetch-Site too.
        let bare = try Self.send(server, "POST", "/__mishap/reset", headers: [("Host", "localhost"), ("Origin", "null")])
        #expect(bare.status == 403)
        // A browser request without Origin that says it is cross-site.
        let siteOnly = try Self.send(server, "DELETE", "/__mishap/rules/r1", headers: [("Host", "localhost"), ("Sec-Fetch-Site", "cross-site")])
        #expect(siteOnly.status == 403)
    }

    /// The dashboard's own calls (same origin, whichever loopback name the page was opened by),
    /// and calls without Origin, go through; `--admin-origin` lets a page of the user's own in.
    @Test func sameOriginNoOriginAndAllowedOriginsGoThrough() throws {
        let server = try TestServer(yaml: Self.yaml, options: Self.options(AdminRequestPolicy(origins: ["http://localhost:3000"])))
        let port = server.port
        let sameOrigin: [(host: String, origin: String)] = [
            ("127.0.0.1:\(port)", "http://127.0.0.1:\(port)"),
            ("localhost:\(port)", "http://localhost:\(port)"),
            ("LocalHost:\(port)", "http://localhost:\(port)"),
            ("[::1]:\(port)", "http://[::1]:\(port)"),
            ("localhost:\(port)", "http://localhost:3000"),  // allowed with --admin-origin
        ]
        for (index, pair) in sameOrigin.enumerated() {
            let site = pair.origin.hasSuffix(":3000") ? "same-site" : "same-origin"
            let added = try Self.send(server, "POST", "/__mishap/rules",
                                      headers: Self.browserHeaders(host: pair.host, origin: pair.origin, site: site), body: Self.rule)
            #expect(added.status == 201, "\(pair): \(added.text)")
            #expect(Self.runtimeRuleCount(server) == index + 1)
        }
        // curl, scripts, test runners: no Origin, whatever Host.
        for host in ["127.0.0.1:\(port)", "localhost"] {
            #expect(try Self.send(server, "POST", "/__mishap/reset", headers: [("Host", host)]).status == 200)
        }
        // Reads carry no risk of change: a page's GET is answered (the browser keeps it from the page).
        let read = try Self.send(server, "GET", "/__mishap/health", headers: [("Host", "localhost"), ("Origin", "http://evil.example")])
        #expect(read.status == 200)
        // Same host, another port: not this server's origin.
        let otherPort = try Self.send(server, "POST", "/__mishap/reset", headers: [("Host", "localhost:\(port)"), ("Origin", "http://localhost:\(port + 1)")])
        #expect(otherPort.status == 403)
    }

    /// DNS rebinding: a page at `http://rebound.example:PORT` whose name now resolves to
    /// 127.0.0.1 is same-origin with Mishap, so the browser lets it read what it calls. Every
    /// admin call through a name that is not a loopback one is refused, reads and the
    /// dashboard included; the scenarios answer any Host as before.
    @Test func aNameOtherThanLoopbackIsRefused() throws {
        let server = try TestServer(yaml: Self.yaml)
        let host = "rebound.example:\(server.port)"
        for (method, path) in [("GET", "/__mishap/requests"), ("GET", "/__mishap/ui/"), ("GET", "/__mishap/health"), ("POST", "/__mishap/reset")] {
            let answer = try Self.send(server, method, path, headers: [("Host", host), ("Origin", "http://\(host)")])
            #expect(answer.status == 403, "\(method) \(path): \(answer.status)")
            let reason = answer.json?["reason"] as? String ?? ""
            #expect(reason.contains("Host 'rebound.example:\(server.port)'") && reason.contains("--admin-host rebound.example"), "\(reason)")
        }
        #expect(try Self.send(server, "GET", "/hello", headers: [("Host", host)]).text == "hi")
        // Loopback names and addresses, and no Host at all (HTTP/1.0), are this machine.
        for host in ["localhost", "localhost.", "app.localhost:1234", "127.0.0.1", "127.0.0.1:\(server.port)", "[::1]:80", "10.1.2.3"] {
            #expect(try Self.send(server, "GET", "/__mishap/health", headers: [("Host", host)]).status == 200, "\(host)")
        }
        #expect(try Self.send(server, "GET", "/__mishap/health", headers: [], version: "HTTP/1.0").status == 200)
    }

    /// `--admin-host` names the user reaches Mishap by; with an admin token the Host check is
    /// left out (a rebound page has no token), and the Origin check stays.
    @Test func allowedNamesAndTheToken() throws {
        let named = try TestServer(yaml: Self.yaml, options: Self.options(AdminRequestPolicy(hosts: ["Mishap.Test"])))
        #expect(try Self.send(named, "GET", "/__mishap/health", headers: [("Host", "mishap.test:\(named.port)")]).status == 200)
        #expect(try Self.send(named, "GET", "/__mishap/health", headers: [("Host", "other.test")]).status == 403)
        let page = "http://mishap.test:\(named.port)"
        let sameOrigin = try Self.send(named, "POST", "/__mishap/reset", headers: [("Host", "mishap.test:\(named.port)"), ("Origin", page)])
        #expect(sameOrigin.status == 200, "\(sameOrigin.text)")

        let token = "t0ken"
        let guarded = try TestServer(yaml: Self.yaml, options: ServiceOptions(adminToken: token))
        let withToken = ("Authorization", "Bearer \(token)")
        #expect(try Self.send(guarded, "GET", "/__mishap/health", headers: [("Host", "mishap:8080"), withToken]).status == 200)
        #expect(try Self.send(guarded, "GET", "/__mishap/health", headers: [("Host", "mishap:8080")]).status == 401)
        let forged = try Self.send(guarded, "POST", "/__mishap/reset", headers: [("Host", "mishap:8080"), ("Origin", "http://evil.example"), withToken])
        #expect(forged.status == 403)
    }

    @Test(arguments: ["", "mishap.test:8080", "http://mishap.test", "a b"])
    func aBadAdminHostIsRefused(name: String) {
        #expect(AdminRequestPolicy.problem(withHost: name) != nil)
    }

    @Test(arguments: ["", "localhost:3000", "http://localhost:3000/", "http://localhost:3000/app", "ftp://a", "http://"])
    func aBadAdminOriginIsRefused(origin: String) {
        #expect(AdminRequestPolicy.problem(withOrigin: origin) != nil)
        #expect(AdminRequestPolicy.problem(withOrigin: "http://localhost:3000") == nil)
        #expect(AdminRequestPolicy.problem(withOrigin: "https://[::1]:8443") == nil)
    }
}
