import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// `proxy` in a response: what it compiles to, and each mistake located exactly.
@Suite("Proxy declarations")
struct ProxyDeclarationTests {
    /// A one-rule endpoint `GET /x` whose rule has `lines` under `respond:` (block style).
    static func respond(_ lines: String) -> String {
        "endpoint: GET /x\nrules:\n  - name: a\n    respond:\n" + lines.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n")
    }

    func plan(_ yaml: String) throws -> ResponsePlan {
        try ScenarioLoader.load(yaml: yaml).makeEngine().respond(to: Request(method: "GET", path: "/x"))
    }

    @Test func proxyUpstreamNamesTheServersUpstreamWithTheRulesDelivery() throws {
        let plan = try plan(Self.respond("proxy: upstream\ndelay: 250\nfault: reset\nheaders: { Retry-After: '2' }"))
        #expect(plan.destination == .serverUpstream)
        #expect(plan.delayMilliseconds == 250 && plan.fault == .reset && plan.bookkeeping.rule == "a" && plan.bookkeeping.endpoint == "GET /x")
        #expect(plan.headers.map(\.name) == ["Retry-After"])
        #expect(plan.prepared == nil)
    }

    @Test func proxyURLIsKeptAsWritten() throws {
        let plan = try plan(Self.respond("proxy: https://api.example.com/v2"))
        #expect(plan.destination == .url("https://api.example.com/v2"))
        #expect(plan.delayMilliseconds == 0 && plan.fault == nil && plan.dribble == nil)
    }

    @Test func aResponseWithoutProxyGoesNowhere() throws {
        #expect(try plan(Self.respond("text: here")).destination == .here)
    }

    struct Mistake: Sendable, CustomTestStringConvertible {
        let lines: String
        let line: Int
        let column: Int
        let containing: [String]
        var testDescription: String { lines }
    }

    @Test(arguments: [
        Mistake(lines: "proxy: ftp://example.com", line: 5, column: 14, containing: ["'proxy' must start with http:// or https://", "'upstream'"]),
        Mistake(lines: "proxy: http://", line: 5, column: 14, containing: ["'proxy' has no host"]),
        Mistake(lines: "proxy: http://u:p@example.com", line: 5, column: 14, containing: ["user name"]),
        Mistake(lines: "proxy: http://example.com/?a=1", line: 5, column: 14, containing: ["query"]),
        Mistake(lines: "proxy: [upstream]", line: 5, column: 14, containing: ["'proxy'"]),
        Mistake(lines: "proxy: upstream\nstatus: 500", line: 6, column: 7, containing: ["'status' cannot be combined with 'proxy'", "'headers', 'delay'"]),
        Mistake(lines: "proxy: upstream\njson: { a: 1 }", line: 6, column: 7, containing: ["'json' cannot be combined with 'proxy'"]),
        Mistake(lines: "proxy: upstream\ntext: hi", line: 6, column: 7, containing: ["'text' cannot be combined with 'proxy'"]),
        Mistake(lines: "proxy: upstream\ncontentType: text/plain", line: 6, column: 7, containing: ["'contentType' cannot be combined"]),
        Mistake(lines: "proxy: upstream\nhang: true", line: 6, column: 7, containing: ["'hang' never answers, so the upstream's answer would never be sent"]),
        Mistake(lines: "prox: upstream", line: 5, column: 7, containing: ["'prox'", "proxy"]),
    ])
    func mistakes(_ mistake: Mistake) {
        expectSingleDiagnostic(Self.respond(mistake.lines), line: mistake.line, column: mistake.column, containing: mistake.containing)
    }
}
