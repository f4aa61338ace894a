import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// The dashboard's files at `/__mishap/ui/`, over real sockets: embedded, typed, kept to their
/// own origin, under the admin API's access rules; and the admin calls added for the page
/// (`requests?after=`, the cycles in `state`).
@Suite(.onBlockingThreads) struct DashboardTests {
    static let yaml = """
        endpoint: GET /hello
        rules:
          - name: busy
            when: { query: { name: busy } }
            cycle:
              - { status: 503, headers: { Retry-After: "1" } }
              - pass
          - name: hello
            respond: { text: hi }
        """

    /// The page and every file it names, each with its type and the headers that keep it to itself.
    @Test func servesThePageAndItsFiles() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let page = try await harness.send("GET", "/__mishap/ui/")
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.text.contains("app.css"))
        let policy = try #require(page.header("Content-Security-Policy"))
        #expect(policy.contains("default-src 'self'"))
        #expect(page.header("X-Frame-Options") == "DENY")
        #expect(page.header("X-Content-Type-Options") == "nosniff")
        // The scripts the page names, in order: the shared one first, the one that starts it last.
        // Named by absolute paths, so the page works at `/__mishap/ui` too.
        let sources = page.text.components(separatedBy: "<script src=\"").dropFirst()
            .compactMap { $0.split(separator: "\"", maxSplits: 1).first.map(String.init) }
        #expect(!sources.isEmpty && sources.allSatisfy { $0.hasPrefix("/__mishap/ui/") }, "\(sources)")
        let names = sources.map { String($0.dropFirst("/__mishap/ui/".count)) }
        #expect(names.first == "page.js")
        #expect(names.last == "app.js")
        // ... and they are exactly the scripts built in (which a 404 lists).
        let missing = try await harness.send("GET", "/__mishap/ui/missing.js")
        let listed = ((missing.json?["reason"] as? String) ?? "").components(separatedBy: "it has ").last ?? ""
        let builtIn = listed.components(separatedBy: ", ").filter { $0.hasSuffix(".js") }
        #expect(Set(names) == Set(builtIn))
        #expect(names.count == builtIn.count && names.count > 1)
        var texts = [page.text]
        for name in names {
            let script = try await harness.send("GET", "/__mishap/ui/" + name)
            #expect(script.status == 200, "\(name)")
            #expect(script.header("Content-Type") == "text/javascript; charset=utf-8")
            #expect(script.text.hasPrefix("\"use strict\";"), "\(name)")
            texts.append(script.text)
        }
        #expect(texts.joined().contains("api(\"GET\", \"requests\""))
        let style = try await harness.send("GET", "/__mishap/ui/app.css")
        #expect(style.status == 200)
        #expect(style.header("Content-Type") == "text/css; charset=utf-8")
        texts.append(style.text)
        let head = try await harness.send("HEAD", "/__mishap/ui/app.js")
        #expect(head.status == 200)
        #expect(head.text.isEmpty)
        // Nothing of the page comes from elsewhere (the SVG namespace is a name, not a fetch).
        for text in texts {
            let other = text.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "")
            #expect(!other.contains("http://") && !other.contains("https://") && !other.contains("//cdn"))
        }
    }

    /// `/__mishap/ui` is the page too, not a redirect (URLSession on Linux follows a redirect
    /// to `/__mishap/ui/` back to `/__mishap/ui` until it gives up); unknown files, other
    /// methods and query parameters are refused in JSON, as other admin calls.
    @Test func bareFolderAndRefusals() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let bare = try await harness.send("GET", "/__mishap/ui")
        let page = try await harness.send("GET", "/__mishap/ui/")
        #expect(bare.status == 200)
        #expect(bare.header("Content-Type") == "text/html; charset=utf-8")
        #expect(bare.text == page.text && !page.text.isEmpty)
        let missing = try await harness.send("GET", "/__mishap/ui/secret.txt")
        #expect(missing.status == 404)
        #expect((missing.json?["reason"] as? String)?.contains("index.html, page.js, polling.js") == true)
        let post = try await harness.send("POST", "/__mishap/ui/")
        #expect(post.status == 405)
        #expect(post.header("Allow") == "GET, HEAD")
        let query = try await harness.send("GET", "/__mishap/ui/?x=1")
        #expect(query.status == 400)
        // The page is not a scenario request: the journal does not keep it.
        #expect(harness.service.journal.entries().entries.isEmpty)
    }

    /// Without a token the page answers this machine only; with one, its files (which hold no
    /// data) are served to anyone, while every call of data still needs the token.
    @Test func accessRules() throws {
        let remotePage = Request(method: "GET", path: "/__mishap/ui/", fromLoopback: false)
        let open = try TestServer(yaml: Self.yaml)
        #expect(open.service.respond(to: remotePage).status == 403)
        let guarded = try TestServer(yaml: Self.yaml, options: ServiceOptions(adminToken: "t0ken"))
        #expect(guarded.service.respond(to: remotePage).status == 200)
        #expect(guarded.service.respond(to: Request(method: "GET", path: "/__mishap/ui/app.js")).status == 200)
        #expect(guarded.service.respond(to: Request(method: "GET", path: "/__mishap/requests")).status == 401)
        #expect(guarded.service.respond(to: Request(method: "GET", path: "/__mishap/requests",
                                                    headers: [Field("X-Mishap-Admin-Token", "t0ken")])).status == 200)
    }

    /// `requests?after=ID` returns only what came after that entry, and `resets` counts the
    /// journal's clears: what a page polls with.
    @Test func journalAfter() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        for name in ["a", "b", "c"] { _ = try await harness.get("/hello?name=" + name) }
        let all = try await harness.journal()
        let ids = all.compactMap { $0["id"] as? Int }
        #expect(ids.count == 3)
        let after = try await harness.journal("after=\(ids[0])")
        #expect(after.compactMap { $0["id"] as? Int } == Array(ids.dropFirst()))
        #expect(try await harness.journal("after=\(ids[2])").isEmpty)
        // With a limit, the first after the id (a poller pages through and misses none),
        // where without `after` a limit keeps the last.
        #expect(try await harness.journal("after=\(ids[0])&limit=1").compactMap { $0["id"] as? Int } == [ids[1]])
        #expect(try await harness.journal("limit=1").compactMap { $0["id"] as? Int } == [ids[2]])
        // The same with another filter (then every entry after the id is read, then limited).
        #expect(try await harness.journal("after=\(ids[0])&limit=1&path=/hello").compactMap { $0["id"] as? Int } == [ids[1]])
        #expect(try await harness.journal("after=0&limit=2&rule=hello").compactMap { $0["id"] as? Int } == Array(ids.prefix(2)))
        // A reset shows in `resets`: ids keep counting, so a poller would not see it otherwise.
        #expect(try await harness.admin("requests")["resets"] as? Int == 0)
        _ = try await harness.admin("reset?session=nobody", method: "POST")
        _ = try await harness.admin("reset", method: "POST")
        #expect(try await harness.admin("requests")["resets"] as? Int == 2)
        let bad = try await harness.send("GET", "/__mishap/requests?after=-1")
        #expect(bad.status == 400)
        #expect((bad.json?["reason"] as? String)?.contains("'after'") == true)
    }

    /// `state` shows where each cycle stands, per session, without moving it.
    @Test func cyclePositions() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        func cycle(_ session: String?) async throws -> [String: Any] {
            let answer = try await harness.admin("state" + (session.map { "?session=" + $0 } ?? ""))
            let cycles = try #require(answer["cycles"] as? [[String: Any]])
            return try #require(cycles.first { $0["rule"] as? String == "busy" })
        }
        #expect(try await cycle("s1")["position"] as? Int == 0)
        #expect(try await cycle("s1")["next"] as? Int == 503)
        #expect(try await harness.get("/hello?name=busy", session: "s1").status == 503)
        let moved = try await cycle("s1")
        #expect(moved["position"] as? Int == 1)
        #expect(moved["length"] as? Int == 2)
        #expect(moved["next"] as? String == "pass")
        #expect(moved["endpoint"] as? String == "GET /hello")
        // Looking did not take a position, and other sessions and the shared count are apart.
        #expect(try await cycle("s1")["position"] as? Int == 1)
        #expect(try await cycle("s2")["position"] as? Int == 0)
        #expect(try await cycle(nil)["position"] as? Int == 0)
        _ = try await harness.admin("reset?session=s1", method: "POST")
        #expect(try await cycle("s1")["position"] as? Int == 0)
    }
}
