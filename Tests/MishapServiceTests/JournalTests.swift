import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// `GET /__mishap/requests`: what the journal records of each request, its filters, its bound.
@Suite(.onBlockingThreads) struct JournalTests {
    static let yaml = """
        endpoints:
          - endpoint: POST /items
            rules:
              - { name: created, when: { query: { kind: book } }, respond: { status: 201, json: { ok: true } } }
              - { name: rejected, respond: { status: 422, text: no } }
          - endpoint: GET /ping
            rules: [{ name: pong, respond: { text: pong } }]
        """

    /// Every recorded field comes from the request and its answer: method, path, decoded query
    /// pairs in order, headers, body, session, endpoint, rule and status; a request no endpoint
    /// matches is recorded with a 404 and no endpoint or rule.
    @Test func recordsEachRequest() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let body = Data(#"{"title":"Dune"}"#.utf8)
        let created = try await harness.send("POST", "/items?kind=book&tag=a%20b", body: body,
                                             headers: ["X-Trace": "t-1", "X-Mishap-Session": "s1", "Content-Type": "application/json"])
        #expect(created.status == 201)
        #expect(try await harness.get("/nowhere").status == 404)

        let answer = try await harness.admin("requests")
        #expect(answer["capacity"] as? Int == 1000)
        #expect(answer["dropped"] as? Int == 0)
        let entries = try #require(answer["requests"] as? [[String: Any]])
        try #require(entries.count == 2)

        let first = entries[0]
        #expect(first["id"] as? Int == 1)
        #expect((first["time"] as? String)?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
        #expect(first["method"] as? String == "POST")
        #expect(first["path"] as? String == "/items")
        #expect(pairs(first["query"]) == [["kind", "book"], ["tag", "a b"]])
        let headers = pairs(first["headers"])
        #expect(headers.contains { $0[0].lowercased() == "x-trace" && $0[1] == "t-1" })
        #expect(headers.contains { $0[0].lowercased() == "content-type" && $0[1] == "application/json" })
        #expect(first["body"] as? String == #"{"title":"Dune"}"#)
        #expect(first["bodySize"] as? Int == body.count)
        #expect(first["bodyTruncated"] as? Bool == false)
        #expect(first["session"] as? String == "s1")
        #expect(first["endpoint"] as? String == "POST /items")
        #expect(first["rule"] as? String == "created")
        #expect(first["status"] as? Int == 201)
        #expect(first["hang"] as? Bool == false)
        #expect(first["delayMs"] as? Int == 0)
        #expect(first["fault"] is NSNull)

        let second = entries[1]
        #expect(second["id"] as? Int == 2)
        #expect(second["method"] as? String == "GET")
        #expect(second["path"] as? String == "/nowhere")
        #expect(second["status"] as? Int == 404)
        #expect(second["endpoint"] is NSNull)
        #expect(second["rule"] is NSNull)
        #expect(second["session"] is NSNull)
        #expect(second["body"] as? String == "")
        #expect(second["bodySize"] as? Int == 0)
    }

    /// Admin requests, reading the journal included, are not journaled themselves.
    @Test func adminRequestsAreNotJournaled() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        _ = try await harness.get("/ping")
        _ = try await harness.admin("health")
        _ = try await harness.admin("scenarios")
        _ = try await harness.journal()
        _ = try await harness.send("GET", "/__mishap/nope")
        let entries = try await harness.journal()
        #expect(entries.map { $0["path"] as? String } == ["/ping"])
        #expect(harness.service.journal.entries().entries.count == 1)
    }

    /// `?path=`, `?session=`, `?rule=`, `?method=` and `?limit=` keep the matching entries, the
    /// most recent ones for `limit`, and combine.
    @Test func filters() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        _ = try await harness.get("/ping", session: "a")                                   // 1
        _ = try await harness.get("/ping", session: "b")                                   // 2
        _ = try await harness.send("POST", "/items?kind=dvd", headers: ["X-Mishap-Session": "a"])  // 3 rejected
        _ = try await harness.get("/ping")                                                 // 4
        _ = try await harness.send("POST", "/items?kind=book")                             // 5 created

        func ids(_ query: String) async throws -> [Int] {
            try await harness.journal(query).map { $0["id"] as? Int ?? -1 }
        }
        #expect(try await ids("") == [1, 2, 3, 4, 5])
        #expect(try await ids("path=/ping") == [1, 2, 4])
        #expect(try await ids("session=a") == [1, 3])
        #expect(try await ids("session=b") == [2])
        #expect(try await ids("rule=rejected") == [3])
        #expect(try await ids("rule=pong&session=a") == [1])
        #expect(try await ids("method=post") == [3, 5])
        #expect(try await ids("endpoint=POST%20/items") == [3, 5])
        #expect(try await ids("limit=2") == [4, 5])
        #expect(try await ids("path=/ping&limit=1") == [4])
        #expect(try await ids("limit=0") == [])
        #expect(try await ids("path=/none") == [])

        let badLimit = try await harness.send("GET", "/__mishap/requests?limit=-1")
        #expect(badLimit.status == 400)
        #expect(badLimit.json?["error"] as? Bool == true)
    }

    /// The journal is a ring: with room for 5, after 8 requests it holds the last 5 (ids 4 to 8,
    /// oldest first) and reports the 3 it let go.
    @Test func ringKeepsTheMostRecent() async throws {
        let harness = try TestServer(yaml: Self.yaml, options: ServiceOptions(journalSize: 5))
        for index in 1...8 { _ = try await harness.get("/ping?n=\(index)") }
        let answer = try await harness.admin("requests")
        #expect(answer["capacity"] as? Int == 5)
        #expect(answer["dropped"] as? Int == 3)
        let entries = try #require(answer["requests"] as? [[String: Any]])
        #expect(entries.map { $0["id"] as? Int } == [4, 5, 6, 7, 8])
        #expect(entries.map { pairs($0["query"]).first?[1] } == ["4", "5", "6", "7", "8"])
    }

    /// A body over `journalBodyLimit` is kept cut to the limit, with `bodyTruncated` true and
    /// `bodySize` the full size; one within the limit is kept whole; bytes that are not UTF-8
    /// come back as `bodyBase64`.
    @Test func bodiesAreCutToTheLimit() async throws {
        let harness = try TestServer(yaml: Self.yaml, options: ServiceOptions(journalBodyLimit: 10))
        _ = try await harness.send("POST", "/items", body: Data("abcdefghijklmnopqrstuvwxy".utf8))
        _ = try await harness.send("POST", "/items", body: Data("0123456789".utf8))
        _ = try await harness.send("POST", "/items", body: Data([0xFF, 0x00, 0x01]))
        let entries = try await harness.journal()
        try #require(entries.count == 3)

        #expect(entries[0]["body"] as? String == "abcdefghij")
        #expect(entries[0]["bodySize"] as? Int == 25)
        #expect(entries[0]["bodyTruncated"] as? Bool == true)

        #expect(entries[1]["body"] as? String == "0123456789")
        #expect(entries[1]["bodySize"] as? Int == 10)
        #expect(entries[1]["bodyTruncated"] as? Bool == false)

        #expect(entries[2]["body"] == nil)
        #expect(entries[2]["bodyBase64"] as? String == "/wAB")
        #expect(entries[2]["bodySize"] as? Int == 3)
    }

    /// `journalSize: 0` keeps nothing (and the admin API still answers).
    @Test func sizeZeroKeepsNothing() async throws {
        let harness = try TestServer(yaml: Self.yaml, options: ServiceOptions(journalSize: 0))
        #expect(try await harness.get("/ping").text == "pong")
        let answer = try await harness.admin("requests")
        #expect(answer["capacity"] as? Int == 0)
        #expect((answer["requests"] as? [Any])?.isEmpty == true)
    }
}
