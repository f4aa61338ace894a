import Foundation
import MishapService
import MishapTestSupport
import Testing

/// A response header value that could not be sent as written (a line break, NUL, another
/// control character but tab, or nothing at all) is refused where it is written, with its
/// line and column: in a rule added at runtime (422), as in a file (`HeaderValueFileTests`).
/// What a placeholder brings from the request never breaks a header: its control characters
/// are removed.
@Suite(.onBlockingThreads) struct HeaderValueTests {
    /// A rule whose `X-Test` header (line 5, column 26) is `value` as YAML writes it.
    static func rule(_ value: String) -> String {
        "endpoint: GET /h\nrules:\n  - name: h\n    respond:\n      headers: { X-Test: \(value) }\n      text: ok\n"
    }

    @Test(arguments: [
        (#""a\r\nX-Injected: yes""#, "body:5:26: 'X-Test': a header value must not hold a line break (CR or LF): it would end the header"),
        (#""a\nb""#, "body:5:26: 'X-Test': a header value must not hold a line break (CR or LF): it would end the header"),
        (#""a\0b""#, "body:5:26: 'X-Test': a header value must not hold NUL: it would cut the value short"),
        (#""a\u001bb""#, "body:5:26: 'X-Test': a header value must not hold control characters (tab is the only one allowed)"),
        (#""""#, "body:5:26: 'X-Test': a header value must not be empty: an empty header cannot be sent; leave the header out"),
    ])
    func runtimeRulesRefuseUnsendableValues(value: String, problem: String) async throws {
        let harness = try TestServer(yaml: Self.rule("fine"))
        let answer = try await harness.send("POST", "/__mishap/rules", body: Data(Self.rule(value).utf8))
        #expect(answer.status == 422, "\(answer.text)")
        #expect(answer.json?["problems"] as? [String] == [problem], "\(answer.text)")
        // Nothing was added: the file's rule answers, with its header.
        let served = try await harness.get("/h")
        #expect(served.header("X-Test") == "fine")
    }

    /// A tab, and text around a placeholder, are fine; `contentType` is checked as a header.
    @Test func tabsAndPlaceholdersPass() async throws {
        let harness = try TestServer(yaml: Self.rule("fine"))
        let tab = try await harness.send("POST", "/__mishap/rules", body: Data(Self.rule(#""a\tb""#).utf8))
        #expect(tab.status == 201, "\(tab.text)")
        #expect(try await harness.get("/h").header("X-Test") == "a\tb")
        let type = "endpoint: GET /t\nrules:\n  - name: t\n    respond: { text: ok, contentType: \"text/plain\\r\\nX-Injected: yes\" }\n"
        let refused = try await harness.send("POST", "/__mishap/rules", body: Data(type.utf8))
        #expect(refused.status == 422)
        #expect(refused.json?["problems"] as? [String]
            == ["body:4:39: 'contentType': a header value must not hold a line break (CR or LF): it would end the header"], "\(refused.text)")
    }

    /// A placeholder's value from the request (a query decoded from `%0D%0A`, a NUL) loses its
    /// control characters: read over a raw socket, the answer has one `X-Echo` header, no
    /// injected one, and the rest of the value.
    @Test func placeholderValuesCannotBreakAHeader() async throws {
        let yaml = "endpoint: GET /e\nrules:\n  - name: e\n    respond: { headers: { X-Echo: \"v={{query.x}}\" }, text: ok }\n"
        let harness = try TestServer(yaml: yaml)
        let port = harness.port
        let response = try await onOwnThread {
            let connection = try RawHTTPConnection(port: port)
            defer { connection.close() }
            try connection.sendRequest("GET", "/e?x=a%0D%0AX-Injected:%20yes%00%1Bz", headers: [("Connection", "close")])
            return try connection.readResponse()
        }
        #expect(response.status == 200)
        #expect(response.header("X-Echo") == "v=aX-Injected: yesz")
        #expect(response.header("X-Injected") == nil)
    }
}
