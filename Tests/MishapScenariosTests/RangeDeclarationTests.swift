import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// `ranges:` on a response: what it compiles to, and each mistake located with its key.
@Suite("Range declarations")
struct RangeDeclarationTests {
    func engine(_ respond: String) throws -> Engine {
        try ScenarioLoader.load(yaml: "endpoint: GET /f\nrules:\n  - name: a\n    respond: \(respond)", name: "x.yaml").makeEngine()
    }

    func plan(_ respond: String, _ headers: [Field] = []) throws -> ResponsePlan {
        try engine(respond).respond(to: Request(method: "GET", path: "/f", headers: headers))
    }

    @Test func trueAnswersRangesOfATextBody() throws {
        let plan = try plan("{ text: abcdefghij, ranges: true }", [Field("Range", "bytes=2-4")])
        #expect(plan.status == 206 && plan.body == Array("cde".utf8))
        #expect(plan.headers.contains(Field("Content-Range", "bytes 2-4/10")))
        #expect(plan.headers.contains(Field("ETag", RangeSupport.strongETag(of: Array("abcdefghij".utf8)))))
    }

    @Test func theOptionsCompile() throws {
        let plan = try plan(#"{ base64: "AAECAwQFBgcICQ==", ranges: { etag: '"v1"', fault: changed-etag, resetAfterBytes: 40% } }"#)
        #expect(plan.status == 200 && plan.body.count == 10)
        #expect(plan.headers.contains(Field("ETag", "\"v1-changed\"")))
        #expect(plan.cutAfterBytes == 4)
        let closing = try self.plan("{ text: abcdefghij, ranges: { closeAfterBytes: 3 } }")
        #expect(closing.cutAfterBytes == 3 && closing.bookkeeping.range?.cutCloses == true)
    }

    /// A body with placeholders gets its ETag worked out per request: a different body, a
    /// different tag, so that `If-Range` fails when it changed.
    @Test func aBodyWithPlaceholdersHasAnETagPerRequest() throws {
        let engine = try engine("{ json: { user: \"{{query.u}}\" }, ranges: true }")
        let first = engine.respond(to: Request(method: "GET", path: "/f", query: [Field("u", "a")]))
        let second = engine.respond(to: Request(method: "GET", path: "/f", query: [Field("u", "b")]))
        let tags = [first, second].map { plan in plan.headers.first { $0.name == "ETag" }?.value }
        #expect(tags[0] != nil && tags[0] != tags[1])
    }

    struct Mistake: CustomTestStringConvertible, Sendable {
        let respond: String
        let column: Int
        let containing: String
        var testDescription: String { respond }
    }

    // Each `respond:` value starts at column 14 of line 4; each problem is placed at the key or value at fault.
    static let mistakes = [
        Mistake(respond: "{ text: a, ranges: false }", column: 33, containing: "'ranges' must be true or a mapping"),
        Mistake(respond: "{ text: a, ranges: { etags: x } }", column: 35, containing: "unknown key 'etags' in 'ranges' (did you mean 'etag'?)"),
        Mistake(respond: "{ text: a, ranges: { etag: v1 } }", column: 41, containing: "'etag' must be an entity tag in double quotes"),
        Mistake(respond: "{ text: a, ranges: { fault: ignore } }", column: 42, containing: "unknown range fault 'ignore'"),
        Mistake(respond: "{ text: a, ranges: { resetAfterBytes: -1 } }", column: 52, containing: "'resetAfterBytes' must be 0 or more bytes"),
        Mistake(respond: "{ text: a, ranges: { closeAfterBytes: 140% } }", column: 52, containing: "'closeAfterBytes' must be a percentage from 0% to 100%"),
        Mistake(respond: "{ text: a, ranges: { resetAfterBytes: 1, closeAfterBytes: 2 } }", column: 55,
                containing: "'resetAfterBytes' and 'closeAfterBytes' cannot both be given"),
        Mistake(respond: "{ text: a, dribble: { chunks: 2, duration: 1s }, ranges: { closeAfterBytes: 1 } }", column: 25,
                containing: "'closeAfterBytes' cannot be combined with 'dribble'"),
        Mistake(respond: "{ text: a, dribble: { chunks: 2, duration: 1s }, ranges: { resetAfterBytes: 1 } }", column: 25,
                containing: "'resetAfterBytes' cannot be combined with 'dribble'"),
        Mistake(respond: "{ ranges: true }", column: 16, containing: "'ranges' needs a body"),
        Mistake(respond: "{ status: 404, text: a, ranges: true }", column: 24, containing: "'ranges' answers a 200 response"),
        Mistake(respond: "{ proxy: upstream, ranges: true }", column: 16,
                containing: "'ranges' answers Range requests from the response's own body and cannot be combined with 'proxy'"),
        Mistake(respond: "{ text: a, hang: true, ranges: true }", column: 25, containing: "'ranges' answers Range requests from the response's own body and cannot be combined with 'hang'"),
        Mistake(respond: "{ text: a, headers: { ETag: '\"x\"' }, ranges: true }", column: 36,
                containing: "'ETag' is set by 'ranges' and cannot be declared; declare it with 'ranges: { etag: ... }'"),
        Mistake(respond: "{ text: a, headers: { Accept-Ranges: none }, ranges: true }", column: 36,
                containing: "'Accept-Ranges' is set by 'ranges'"),
    ]

    @Test("Mistakes in ranges, located", arguments: mistakes)
    func mistake(_ mistake: Mistake) throws {
        let yaml = "endpoint: GET /f\nrules:\n  - name: a\n    respond: \(mistake.respond)"
        do {
            _ = try ScenarioLoader.load(yaml: yaml, name: "x.yaml")
            Issue.record("loaded: \(mistake.respond)")
        } catch {
            #expect(error.description.contains("x.yaml:4:\(mistake.column): \(mistake.containing)"), "\(error)")
        }
    }
}
