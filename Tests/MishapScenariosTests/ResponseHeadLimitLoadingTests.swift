import Foundation
import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// A response's headers may take at most `ResponseHead.maximumHeaderBytes`: more could never be
/// sent, so a file declaring more is refused where it does, and headers that grow past the limit
/// through placeholders are planned as a 500.
@Suite("Response header limit")
struct ResponseHeadLimitLoadingTests {
    static let limit = ResponseHead.maximumHeaderBytes

    /// A value making the header `name` take `bytes` bytes (name, `: `, value, CRLF).
    static func value(for name: String, taking bytes: Int) -> String {
        String(repeating: "v", count: bytes - name.utf8.count - 4)
    }

    /// An endpoint `GET /x` whose response (no body) declares `headers`, one per line from line 6.
    static func scenario(_ headers: [(String, String)], extra: String = "") -> String {
        var yaml = """
            endpoint: GET /x
            rules:
              - name: a
                respond:
                  headers:

            """
        for (name, value) in headers { yaml += "        \(name): \"\(value)\"\n" }
        return yaml + extra
    }

    @Test("Static headers one byte over the limit are refused, at the header's value")
    func oneByteOverIsRefused() {
        expectSingleDiagnostic(Self.scenario([("X-Big", Self.value(for: "X-Big", taking: Self.limit + 1))]),
                               line: 6, column: 16,
                               containing: ["the response's headers take \(Self.limit + 1) bytes",
                                            "over the limit of \(Self.limit) bytes for a response's headers"],
                               notContaining: ["at least"])
    }

    @Test("Static headers at the limit load, and are planned whole")
    func atTheLimitLoads() throws {
        let value = Self.value(for: "X-Big", taking: Self.limit)
        let plan = try ScenarioLoader.load(yaml: Self.scenario([("X-Big", value)])).makeEngine()
            .respond(to: Request(method: "GET", path: "/x"))
        #expect(plan.status == 200)
        let whole = plan.header("X-Big") == value
        #expect(whole)
        #expect(plan.bookkeeping.warning == nil)
        #expect(plan.prepared != nil)
    }

    @Test("The header that takes the headers over the limit is the one located")
    func theHeaderCrossingTheLimitIsLocated() {
        let half = Self.limit / 2 + 1
        expectSingleDiagnostic(Self.scenario([("X-Small", "s"), ("X-One", Self.value(for: "X-One", taking: half)),
                                              ("X-Two", Self.value(for: "X-Two", taking: half)), ("X-Last", "l")]),
                               line: 8, column: 16, containing: ["take \(12 + 2 * half + 11) bytes"])
    }

    @Test("A body's Content-Type counts, and a long contentType is located at its value")
    func contentTypeCounts() {
        // `text` adds `Content-Type: text/plain; charset=utf-8` (41 bytes): X-Big alone fits.
        let fits = Self.value(for: "X-Big", taking: Self.limit - 40)
        expectSingleDiagnostic(Self.scenario([("X-Big", fits)], extra: "      text: hi\n"), line: 6, column: 16,
                               containing: ["take \(Self.limit + 1) bytes"])
        let yaml = """
            endpoint: GET /x
            rules:
              - name: a
                respond:
                  text: hi
                  contentType: "\(String(repeating: "t", count: Self.limit))"
            """
        expectSingleDiagnostic(yaml, line: 6, column: 20, containing: ["take \(Self.limit + 16) bytes"])
    }

    @Test("Fixed text over the limit is refused even with placeholders; under it, it loads")
    func placeholdersCountAsEmptyAtLoad() throws {
        let over = Self.value(for: "X-Big", taking: Self.limit + 1 - "X-Echo".utf8.count - 4)
        expectSingleDiagnostic(Self.scenario([("X-Big", over), ("X-Echo", "{{query.x}}")]), line: 7, column: 17,
                               containing: ["at least \(Self.limit + 1) bytes without their placeholders"])
        let under = Self.value(for: "X-Big", taking: Self.limit - "X-Echo".utf8.count - 4)
        _ = try ScenarioLoader.load(yaml: Self.scenario([("X-Big", under), ("X-Echo", "{{query.x}}")]))
    }

    @Test("A response that never sends its headers is held to the limit all the same")
    func faultsAreCheckedToo() {
        expectSingleDiagnostic(Self.scenario([("X-Big", Self.value(for: "X-Big", taking: Self.limit + 1))],
                                             extra: "      fault: close\n"),
                               line: 6, column: 16, containing: ["over the limit"])
    }

    @Test("Every response of a file is checked, and a folder's file is named")
    func foldersAndCyclesAreChecked() throws {
        let folder = try TemporaryFolder()
        let big = Self.value(for: "X-Big", taking: Self.limit + 1)
        _ = try folder.write("big.yaml", """
            endpoint: GET /x
            rules:
              - name: a
                cycle:
                  - { status: 200 }
                  - { status: 503, headers: { X-Big: "\(big)" } }
            """)
        expectSingleDiagnostic(ofDirectory: folder.path, file: folder.path + "/big.yaml", line: 6, column: 42,
                               containing: ["over the limit of \(Self.limit) bytes"])
    }

    /// Placeholders that render the headers past the limit: the plan is a 500 with a JSON reason,
    /// for the same endpoint and rule, with a warning for the server to log; under the limit the
    /// headers are rendered as usual. A `close` fault never sends them and is left alone.
    @Test("Headers rendered past the limit are planned as a 500 with a warning")
    func renderedPastTheLimit() throws {
        let base = Self.limit - "X-Echo".utf8.count - 4 - 10
        let yaml = Self.scenario([("X-Big", Self.value(for: "X-Big", taking: base)), ("X-Echo", "{{query.x}}")])
        let engine = try ScenarioLoader.load(yaml: yaml).makeEngine()
        let fits = engine.respond(to: Request(method: "GET", path: "/x", query: [Field("x", "0123456789")]))
        #expect(fits.status == 200)
        #expect(fits.header("X-Echo") == "0123456789")
        #expect(fits.bookkeeping.warning == nil)

        let over = engine.respond(to: Request(method: "GET", path: "/x", query: [Field("x", "0123456789A")]))
        #expect(over.status == 500)
        #expect(over.bookkeeping.endpoint == "GET /x")
        #expect(over.bookkeeping.rule == "a")
        #expect(over.header("X-Echo") == nil)
        #expect(over.header("Content-Type") == "application/json; charset=utf-8")
        #expect(over.text.contains("its headers take \(Self.limit + 1) bytes"), "\(over.text)")
        let warning = try #require(over.bookkeeping.warning)
        #expect(warning.contains("\(Self.limit + 1) bytes"), "\(warning)")
        #expect(warning.contains("instead of 200"), "\(warning)")

        let closing = try ScenarioLoader.load(yaml: yaml + "      fault: close\n").makeEngine()
            .respond(to: Request(method: "GET", path: "/x", query: [Field("x", "0123456789A")]))
        #expect(closing.fault == .close)
        #expect(closing.bookkeeping.warning == nil)
    }
}
