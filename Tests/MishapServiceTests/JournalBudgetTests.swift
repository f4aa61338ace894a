import Foundation
import MishapService
import MishapTestSupport
import Testing

/// `GET /__mishap/requests` answers within its byte budget whatever the journal holds, says
/// where the rest starts (`truncated`, `next`), and cuts bodies to `bodyBytes` when asked.
@Suite(.onBlockingThreads) struct JournalBudgetTests {
    static let yaml = """
        endpoint: POST /upload
        rules:
          - name: ok
            respond: { status: 204 }
        """

    /// The budget of one answer (`JournalListing.byteBudget`), and room for the fields after
    /// the entries.
    static let budget = 4 << 20
    static let trailer = 256

    /// Sends `bodies` to `POST /upload` on one connection.
    static func upload(_ server: TestServer, _ bodies: [[UInt8]]) throws {
        let connection = try server.connect()
        for body in bodies {
            try connection.sendRequest("POST", "/upload", headers: [("Content-Type", "text/plain")], body: body)
            #expect(try connection.readResponse().status == 204)
        }
    }

    @Test("30 requests of 64 KiB of control characters (12 MB of JSON) are read in pages within the budget, each whole")
    func aLargeJournalIsReadInPages() async throws {
        let server = try TestServer(yaml: Self.yaml)
        let body = [UInt8](repeating: 0x01, count: 64 << 10)  // each byte is `\u0001` in JSON: 384 KiB an entry
        try Self.upload(server, Array(repeating: body, count: 30))
        var after: Int?
        var seen: [Int] = []
        var pages = 0
        while pages < 30 {
            pages += 1
            let response = try await server.send("GET", "/__mishap/requests" + (after.map { "?after=\($0)" } ?? ""))
            #expect(response.status == 200)
            #expect(response.body.count <= Self.budget + Self.trailer, "an answer of \(response.body.count) bytes")
            let answer = try #require(response.json)
            let entries = try #require(answer["requests"] as? [[String: Any]])
            #expect(!entries.isEmpty)
            for entry in entries {
                #expect((entry["body"] as? String)?.utf8.count == body.count && entry["bodyTruncated"] as? Bool == false)
            }
            seen += entries.compactMap { $0["id"] as? Int }
            guard answer["truncated"] as? Bool == true else {
                #expect(answer["truncated"] as? Bool == false && answer["next"] == nil)
                break
            }
            after = try #require(answer["next"] as? Int)
            #expect(after == seen.last, "next is the last entry given")
        }
        #expect(seen == Array(1...30), "every entry once, in order")
        #expect(pages >= 3, "\(pages) pages")
        // The count reads the whole journal: no budget there.
        #expect((try await server.admin("requests/count"))["count"] as? Int == 30)
    }

    @Test("bodyBytes cuts each body (text at a character boundary, binary as base64 of the bytes kept)")
    func bodiesAreCutToBodyBytes() async throws {
        let server = try TestServer(yaml: Self.yaml)
        let text = Array(String(repeating: "é", count: 100).utf8)
        try Self.upload(server, [text, [0xFF, 0xFE, 0xFD, 0xFC, 0xFB, 0xFA], []])
        func entries(_ query: String) async throws -> [[String: Any]] { try await server.journal(query) }

        let cut = try await entries("bodyBytes=5")
        #expect(cut.map { $0["body"] as? String } == ["éé", nil, ""])
        #expect(cut[1]["bodyBase64"] as? String == "//79/Ps=")
        #expect(cut.map { $0["bodyTruncated"] as? Bool } == [true, true, false])
        #expect(cut.map { $0["bodySize"] as? Int } == [200, 6, 0])

        let none = try await entries("bodyBytes=0")
        #expect(none.map { $0["body"] as? String } == ["", "", ""])
        #expect(none.map { $0["bodyTruncated"] as? Bool } == [true, true, false])

        let whole = try await entries("")
        #expect(whole.first?["body"] as? String == String(repeating: "é", count: 100))
        #expect(whole.first?["bodyTruncated"] as? Bool == false)

        let negative = try await server.send("GET", "/__mishap/requests?bodyBytes=-1")
        #expect(negative.status == 400 && negative.text.contains("'bodyBytes'"), "\(negative.text)")
        #expect(try await server.send("GET", "/__mishap/requests/count?bodyBytes=1").status == 400, "a count shows no bodies")
    }
}
