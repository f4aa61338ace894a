import Foundation
import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// The delivery keys of a response (`delay`, `hang`, `dribble`, `fault`), `base64` bodies,
/// `chance` and `{{now+Ns}}`: what they compile to, and each mistake located exactly.
@Suite("Failure declarations")
struct FailureDeclarationTests {
    /// A one-rule endpoint `GET /x` whose rule has `lines` under `respond:` (block style).
    static func respond(_ lines: String) -> String {
        "endpoint: GET /x\nrules:\n  - name: a\n    respond:\n" + lines.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n")
    }

    /// The plan of `GET /x` for a scenario that must load.
    func plan(_ yaml: String, seed: UInt64? = nil) throws -> ResponsePlan {
        try ScenarioLoader.load(yaml: yaml).makeEngine(options: EngineOptions(seed: seed)).respond(to: Request(method: "GET", path: "/x"))
    }

    // MARK: What valid declarations compile to

    @Test(arguments: [
        ("delay: 300", 300), ("delay: '2s'", 2000), ("delay: 300ms", 300), ("delay: 1.5s", 1500), ("delay: 0", 0),
    ])
    func durations(line: String, milliseconds: Int) throws {
        let plan = try plan(Self.respond("\(line)\ntext: late"))
        #expect(plan.delayMilliseconds == milliseconds)
        #expect(plan.text == "late")
        #expect(plan.fault == nil && !plan.hang && plan.dribble == nil)
    }

    @Test func delayRangeDrawsFromTheSeed() throws {
        let yaml = Self.respond("delay: { min: 100, max: 2000 }")
        let engine = try ScenarioLoader.load(yaml: yaml).makeEngine(options: EngineOptions(seed: 3))
        let again = try ScenarioLoader.load(yaml: yaml).makeEngine(options: EngineOptions(seed: 3))
        let draws = (0..<20).map { _ in engine.respond(to: Request(method: "GET", path: "/x")).delayMilliseconds }
        let repeated = (0..<20).map { _ in again.respond(to: Request(method: "GET", path: "/x")).delayMilliseconds }
        #expect(draws.allSatisfy { (100...2000).contains($0) }, "\(draws)")
        #expect(Set(draws).count > 10, "\(draws)")
        #expect(draws == repeated)
    }

    @Test func hangAndDribble() throws {
        #expect(try plan(Self.respond("hang: true")).hang)
        #expect(try plan(Self.respond("hang: false\nstatus: 204")).hang == false)
        let dribbled = try plan(Self.respond("dribble: { chunks: 5, duration: 5s }\njson: { a: 1 }"))
        #expect(dribbled.dribble == Dribble(chunks: 5, milliseconds: 5000))
        #expect(dribbled.text == #"{"a":1}"#)
        // A delay may come before a hang, a dribble or a fault.
        let delayedDribble = try plan(Self.respond("delay: 100\ndribble: { chunks: 1, duration: 0 }"))
        #expect(delayedDribble.delayMilliseconds == 100)
        #expect(delayedDribble.dribble == Dribble(chunks: 1, milliseconds: 0))
    }

    @Test(arguments: [
        ("reset", Fault.reset), ("close", .close), ("garbage", .garbage), ("truncate", .truncate),
        ("truncate-chunked", .truncateChunked), ("content-length-mismatch", .contentLengthMismatch),
    ])
    func faultNames(name: String, fault: Fault) throws {
        #expect(try plan(Self.respond("fault: \(name)")).fault == fault)
    }

    @Test func garbageWithoutABodyIs64RandomBytesThatCannotStartHTTP() throws {
        let engine = try ScenarioLoader.load(yaml: Self.respond("fault: garbage")).makeEngine()
        var seen: Set<[UInt8]> = []
        for _ in 0..<50 {
            let body = engine.respond(to: Request(method: "GET", path: "/x")).body
            #expect(body.count == 64)
            #expect(body.first != UInt8(ascii: "H"))
            seen.insert(body)
        }
        #expect(seen.count == 50)
    }

    @Test func base64BodyIsRawBytes() throws {
        let raw = try plan(Self.respond("base64: \"/+4AAQ==\""))
        #expect(raw.body == [0xFF, 0xEE, 0x00, 0x01])
        #expect(raw.header("Content-Type") == "application/octet-stream")
        let typed = try plan(Self.respond("base64: \"eyJhIjoi/yJ9\"\ncontentType: application/json; charset=utf-8"))
        #expect(typed.body == Array(#"{"a":""#.utf8) + [0xFF] + Array(#""}"#.utf8))
        #expect(typed.header("Content-Type") == "application/json; charset=utf-8")
    }

    @Test func nowPlaceholderIsAnHTTPDate() throws {
        let plan = try plan(Self.respond("headers: { Retry-After: \"{{now+60s}}\", Expires: \"{{now-30s}}\", Date-Now: \"{{now}}\" }"))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        let now = Date()
        for (name, offset) in [("Retry-After", 60.0), ("Expires", -30.0), ("Date-Now", 0.0)] {
            let value = try #require(plan.header(name))
            let date = try #require(formatter.date(from: value), "\(name): \(value)")
            #expect(abs(date.timeIntervalSince(now) - offset) <= 2, "\(name): \(value)")
            #expect(value.hasSuffix(" GMT"))
        }
    }

    @Test func chanceZeroNeverAppliesAndOneAlways() throws {
        let engine = try ScenarioLoader.load(yaml: """
            endpoint: GET /x
            rules:
              - name: never
                chance: 0
                respond: { status: 500 }
              - name: always
                chance: 1
                respond: { status: 503 }
              - name: fallback
                respond: { status: 200 }
            """).makeEngine()
        let statuses = Set((0..<50).map { _ in engine.respond(to: Request(method: "GET", path: "/x")).status })
        #expect(statuses == [503])
    }

    // MARK: Located mistakes

    /// A mistake in a response's delivery keys: the lines under `respond:` (in `respond(_:)`),
    /// where it is reported (the first of those lines is line 5), and what the message says.
    struct Mistake: Sendable, CustomTestStringConvertible {
        let lines: String
        let line: Int
        let column: Int
        let containing: [String]
        var notContaining: [String] = []

        var testDescription: String { lines.replacingOccurrences(of: "\n", with: "; ") }
    }

    static let mistakes: [Mistake] = [
        // An unknown fault, with a suggestion; the trigger's name is not the fault's.
        Mistake(lines: "fault: rest", line: 5, column: 14, containing: ["unknown fault 'rest' (did you mean 'reset'?)", "expected one of reset, close, garbage, truncate, truncate-chunked, content-length-mismatch"]),
        Mistake(lines: "fault: truncated", line: 5, column: 14, containing: ["unknown fault 'truncated' (did you mean 'truncate'?)"]),
        Mistake(lines: "fault: explode", line: 5, column: 14, containing: ["unknown fault 'explode'"], notContaining: ["did you mean"]),
        // A negative delay.
        Mistake(lines: "delay: -5", line: 5, column: 14, containing: ["'delay' must not be negative"]),
        Mistake(lines: "delay: -1s", line: 5, column: 14, containing: ["'delay' must not be negative"]),
        Mistake(lines: "delay: { min: -1, max: 5 }", line: 5, column: 21, containing: ["'min' must not be negative"]),
        // A delay that is not a duration.
        Mistake(lines: "delay: abc", line: 5, column: 14, containing: ["'delay' must be a duration in milliseconds, like 300 or '2s' (units: ms, s, m, h), not 'abc'"]),
        Mistake(lines: "delay: [1, 2]", line: 5, column: 14, containing: ["'delay' must be a duration in milliseconds"]),
        Mistake(lines: "delay: { min: 1, max: soon }", line: 5, column: 29, containing: ["'max' must be a duration in milliseconds, like 300 or '2s' (units: ms, s, m, h), not 'soon'"]),
        // A delay range without max, or with min above max.
        Mistake(lines: "delay: { min: 5 }", line: 5, column: 14, containing: ["a 'delay' range needs both 'min' and 'max'"]),
        Mistake(lines: "delay: { max: 5 }", line: 5, column: 14, containing: ["a 'delay' range needs both 'min' and 'max'"]),
        Mistake(lines: "delay: { min: 200, max: 100 }", line: 5, column: 14, containing: ["'delay' needs min <= max"]),
        Mistake(lines: "delay: { min: 1, max: 2, mean: 3 }", line: 5, column: 32, containing: ["unknown key 'mean' in 'delay'"]),
        // A dribble with no pieces (or so many that scheduling them per request would cost
        // memory on every request), or without its duration.
        Mistake(lines: "dribble: { chunks: 0, duration: 100 }", line: 5, column: 26, containing: ["'chunks' must be from 1 to 10000"]),
        Mistake(lines: "dribble: { chunks: 1000000000, duration: 100 }", line: 5, column: 26, containing: ["'chunks' must be from 1 to 10000"]),
        Mistake(lines: "dribble: { chunks: 4 }", line: 5, column: 16, containing: ["'dribble' needs 'chunks' (how many pieces) and 'duration' (over how long)"]),
        Mistake(lines: "dribble: { duration: 1s }", line: 5, column: 16, containing: ["'dribble' needs 'chunks'"]),
        Mistake(lines: "dribble: { chunks: 2, duration: -1 }", line: 5, column: 39, containing: ["'duration' must not be negative"]),
        Mistake(lines: "dribble: 5", line: 5, column: 16, containing: ["'dribble' must be a mapping"]),
        // hang with fault or dribble can never happen.
        Mistake(lines: "hang: true\nfault: reset", line: 6, column: 7, containing: ["'hang' never answers, so 'fault' would never happen"]),
        Mistake(lines: "hang: true\ndribble: { chunks: 2, duration: 100 }", line: 6, column: 7, containing: ["'hang' never answers, so 'dribble' would never happen"]),
        Mistake(lines: "hang: yes please", line: 5, column: 13, containing: ["'hang' must be true or false"]),
        // dribble with fault.
        Mistake(lines: "dribble: { chunks: 2, duration: 100 }\nfault: reset", line: 6, column: 7, containing: ["'dribble' sends a whole response slowly and cannot be combined with 'fault'"]),
        // Invalid base64: not base64 at all, 6 leftover bits, data after padding, 3 padding
        // characters, two bodies.
        Mistake(lines: "base64: \"not base64!\"", line: 5, column: 15, containing: ["'base64' is not valid base64"]),
        Mistake(lines: "base64: \"a\"", line: 5, column: 15, containing: ["'base64' is not valid base64"]),
        Mistake(lines: "base64: \"AAAAA\"", line: 5, column: 15, containing: ["'base64' is not valid base64"]),
        Mistake(lines: "base64: \"AA=A\"", line: 5, column: 15, containing: ["'base64' is not valid base64"]),
        Mistake(lines: "base64: \"A===\"", line: 5, column: 15, containing: ["'base64' is not valid base64"]),
        Mistake(lines: "text: x\nbase64: \"AA==\"", line: 6, column: 7, containing: ["a response has one body: 'text' and 'base64' cannot both be given"]),
        // Leftover bits that are not zero make base64 invalid, as Base64.decode's comment says:
        // "YR" would decode to "a" with the 4 leftover bits 0001, not a canonical encoding
        // (RFC 4648, section 3.5), so most likely a typo.
        Mistake(lines: "base64: \"YR==\"", line: 5, column: 15, containing: ["'base64' is not valid base64"]),
        // A malformed {{now±N}} placeholder.
        Mistake(lines: "headers: { Retry-After: \"{{now+abc}}\" }", line: 5, column: 31, containing: ["'{{now+abc}}' must be now, now+SECONDSs or now-SECONDSs, like {{now+30s}}"]),
        Mistake(lines: "text: \"{{now+60}}\"", line: 5, column: 13, containing: ["'{{now+60}}' must be now, now+SECONDSs or now-SECONDSs"]),
        Mistake(lines: "text: \"{{now.x}}\"", line: 5, column: 13, containing: ["'{{now.x}}': a time is written as an HTTP-date (now+60s), now+60s.iso8601 or now+60s.epoch"]),
    ]

    @Test("A mistake in a delivery key is one problem, located", arguments: mistakes)
    func deliveryMistake(_ mistake: Mistake) {
        expectSingleDiagnostic(Self.respond(mistake.lines), line: mistake.line, column: mistake.column,
                               containing: mistake.containing, notContaining: mistake.notContaining)
    }

    @Test("A chance outside 0 to 1, or not a number", arguments: ["1.5", "-0.1", "x", "'50%'"])
    func badChance(value: String) {
        expectSingleDiagnostic("""
            endpoint: GET /x
            rules:
              - name: a
                chance: \(value)
                respond: { status: 500 }
            """, line: 4, column: 13, containing: ["'chance' must be a number from 0 to 1"])
    }

    @Test("Padding is optional in base64")
    func unpaddedBase64() throws {
        #expect(try plan(Self.respond("base64: \"YWJj\"")).body == Array("abc".utf8))
        #expect(try plan(Self.respond("base64: \"YWI\"")).body == Array("ab".utf8))
        #expect(try plan(Self.respond("base64: \"YQ\"")).body == Array("a".utf8))
        #expect(try plan(Self.respond("base64: \"YQ==\"")).body == Array("a".utf8))
    }

    @Test("Several delivery mistakes are all reported, in file order")
    func severalMistakes() throws {
        let found = diagnostics(ofYAML: """
            endpoint: GET /x
            rules:
              - name: a
                chance: 2
                respond: { fault: rest }
              - name: b
                respond: { delay: { min: 9, max: 1 }, base64: "!" }
            """)
        try #require(found.count == 4, "\(found)")
        expect(found[0], file: "inline.yaml", line: 4, column: 13, containing: ["'chance' must be a number from 0 to 1"])
        expect(found[1], file: "inline.yaml", line: 5, column: 23, containing: ["unknown fault 'rest'"])
        expect(found[2], file: "inline.yaml", line: 7, column: 23, containing: ["'delay' needs min <= max"])
        expect(found[3], file: "inline.yaml", line: 7, column: 51, containing: ["'base64' is not valid base64"])
    }
}
