import Foundation
import MishapEngine
import MishapTestSupport
@testable import MishapScenarios
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Checks of the fuzz cases

/// What the fuzz tests check of each case beyond `ScenarioCorpus`: located problems, and an
/// engine that answers.
enum FuzzChecks {
    /// The corpus's mutations, with the keys the loader knows.
    static let mutator = ScenarioMutator(keys: FileCompiler.fileKeys + FileCompiler.ruleKeys + FileCompiler.responseKeys
        + FileCompiler.whenKeys + FileCompiler.conditionKeys + ScenarioMutator.extraKeys)

    /// Why `diagnostic` is not a located problem of `file`, or nil when it is.
    static func problem(with diagnostic: ScenarioDiagnostic, file: String, maximumLine: Int) -> String? {
        if diagnostic.file != file { return "names \(diagnostic.file), not \(file)" }
        if diagnostic.line < 1 || diagnostic.line > maximumLine { return "line \(diagnostic.line) is outside 1...\(maximumLine)" }
        if diagnostic.column < 1 { return "column \(diagnostic.column) is below 1" }
        if diagnostic.message.trimmingCharacters(in: .whitespaces).isEmpty { return "the message is empty" }
        if diagnostic.message.contains(where: \.isNewline) { return "the message spans lines" }
        return nil
    }

    /// A path an endpoint answers: parameters as `v`, a final `*` as two segments.
    static func samplePath(_ pattern: PathPattern) -> String {
        "/" + pattern.segments.map { segment -> String in
            switch segment {
            case .literal(let text): return text
            case .parameter: return "v"
            case .rest: return "r/s"
            }
        }.joined(separator: "/")
    }

    /// Asks every endpoint of an accepted set a few questions, rules by name included; returns
    /// why an answer is wrong, or nil. Query values stay short: matching speed is not tested here.
    static func exercise(_ set: ScenarioSet) -> String? {
        let engine = set.makeEngine(options: EngineOptions(seed: 7))
        for endpoint in set.endpoints {
            let method = endpoint.method == "ANY" ? "PATCH" : endpoint.method
            let path = samplePath(endpoint.path)
            var requests = [
                Request(method: method, path: path),
                Request(method: method, path: path,
                        query: [Field("q", "aaaa!"), Field("mode", "maintenance"), Field("userName", "maintenance")],
                        headers: [Field("X-Speed", "slow"), Field("Content-Type", "application/json")],
                        body: Array(#"{"email":"a@x.com","password":"12345678","user":{"email":"z@x.com"}}"#.utf8)),
                Request(method: method, path: path, headers: [Field("Content-Type", "application/x-www-form-urlencoded")],
                        body: Array("email=x%40y&password=%ZZ&".utf8)),
                Request(method: method, path: path, body: [0xFF, 0x00, 0x7B]),
            ]
            for rule in endpoint.rules.prefix(4) {
                requests.append(Request(method: method, path: path,
                                        headers: [Field("X-Mishap-Rule", rule.name), Field("X-Mishap-Session", "fuzz")]))
            }
            for request in requests {
                for _ in 0..<2 {
                    let plan = engine.respond(to: request)
                    guard (100...599).contains(plan.status) else {
                        return "\(request.method) \(request.path) answered status \(plan.status)"
                    }
                }
            }
        }
        return nil
    }

    /// A number from the environment, for longer runs by hand (`MISHAP_FUZZ_CASES=100000`).
    static func setting(_ name: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) } ?? value
    }
}

// MARK: - Tests

/// Loading never traps or hangs, and answers either a set that an engine can serve or
/// problems that are all `file:line:column: message`, for mutated and pathological YAML.
@Suite("Scenario loader fuzzing")
struct LoaderFuzzTests {
    /// A file of one endpoint, `GET /x`, and one rule answering with `respond` (written on line 4).
    static func rule(_ respond: String) -> String {
        "endpoint: GET /x\nrules:\n  - name: a\n    respond: \(respond)\n"
    }

    /// The one problem of `text`, checked to be located in it.
    static func singleProblem(_ text: String, name: String = "inline.yaml",
                              sourceLocation: SourceLocation = #_sourceLocation) -> ScenarioDiagnostic? {
        let found: [ScenarioDiagnostic]
        do {
            _ = try ScenarioLoader.load(yaml: text, name: name)
            Issue.record("loaded, but a problem was expected", sourceLocation: sourceLocation)
            return nil
        } catch {
            found = error.diagnostics
        }
        #expect(found.count == 1, "\(found.map(\.description))", sourceLocation: sourceLocation)
        for diagnostic in found {
            let problem = FuzzChecks.problem(with: diagnostic, file: name, maximumLine: ScenarioCorpus.maximumLine(text))
            #expect(problem == nil, "\(problem ?? ""): \(diagnostic)", sourceLocation: sourceLocation)
        }
        return found.first
    }

    @Test("The fuzz bases load, use every feature, and answer")
    func basesAreValid() throws {
        for (index, text) in ScenarioCorpus.inline.enumerated() {
            let set = try ScenarioLoader.load(yaml: text, name: "base\(index).yaml")
            #expect(!set.endpoints.isEmpty)
            #expect(FuzzChecks.exercise(set) == nil)
        }
        let set = try ScenarioLoader.load(yaml: ScenarioCorpus.everything)
        let engine = set.makeEngine()
        let rules = set.endpoints[0].rules
        #expect(rules.map(\.name) == ["maintenance", "slow", "trickle", "broken", "hang", "fallback"])
        let plan = engine.respond(to: Request(method: "GET", path: "/users/7/items/a/b", query: [Field("q", "zz")]))
        #expect(plan.bookkeeping.rule == "trickle")
        #expect(plan.dribble == Dribble(chunks: 5, milliseconds: 50))
        #expect(plan.body == Array("hello".utf8))
        // The alias repeats the anchored step: two failures, then the rule below.
        let anchors = try ScenarioLoader.load(yaml: ScenarioCorpus.anchors).makeEngine()
        let statuses = (0..<3).map { _ in anchors.respond(to: Request(method: "GET", path: "/anchors")).status }
        #expect(statuses == [500, 500, 200])
        // The repository's scenario files are mutated too.
        #expect(ScenarioCorpus.bases(scenarios: defaultScenariosDirectory).count > ScenarioCorpus.inline.count)
    }

    @Test("5,000 mutated scenarios load, or fail with located problems", .timeLimit(.minutes(3)))
    func mutationFuzz() throws {
        let cases = FuzzChecks.setting("MISHAP_FUZZ_CASES", default: 5000)
        let seed = UInt64(FuzzChecks.setting("MISHAP_FUZZ_SEED", default: 0x5EED))
        let trace = ProcessInfo.processInfo.environment["MISHAP_FUZZ_TRACE"] != nil
        let bases = ScenarioCorpus.bases(scenarios: defaultScenariosDirectory).map { Array($0.utf8) }
        let folder = try TemporaryFolder()
        var failures: [String] = []
        var accepted = 0
        var slowest: (index: Int, duration: Duration) = (0, .zero)
        let clock = ContinuousClock()
        let started = clock.now

        for index in 0..<cases {
            var random = SeededRandom(seed: seed &+ UInt64(index) &* 0x1_0000_0001)
            let bytes = FuzzChecks.mutator.mutate(random.pick(bases), &random)
            let text = String(decoding: bytes, as: UTF8.self)
            // One case in ten goes through a folder, raw bytes and all.
            let throughFolder = index % 10 == 0
            let name = throughFolder ? folder.path + "/case.yaml" : "case\(index).yaml"
            if trace { print("fuzz case \(index) (seed \(seed)):\n\(text)") }
            let caseStart = clock.now
            let outcome: Result<ScenarioSet, ScenarioError>
            if throughFolder {
                try folder.write("case.yaml", Data(bytes))
                outcome = Result { () throws(ScenarioError) in try ScenarioLoader.load(directory: folder.path) }
            } else {
                outcome = Result { () throws(ScenarioError) in try ScenarioLoader.load(yaml: text, name: name) }
            }
            switch outcome {
            case .success(let set):
                accepted += 1
                if let problem = FuzzChecks.exercise(set) { failures.append("case \(index): \(problem)") }
            case .failure(let error):
                if error.diagnostics.isEmpty { failures.append("case \(index): an error without problems") }
                let lines = ScenarioCorpus.maximumLine(text)
                for diagnostic in error.diagnostics {
                    if let problem = FuzzChecks.problem(with: diagnostic, file: name, maximumLine: lines) {
                        failures.append("case \(index): \(problem): \(diagnostic)\n--- text:\n\(text.prefix(2000))")
                    }
                }
            }
            let duration = clock.now - caseStart
            if duration > slowest.duration { slowest = (index, duration) }
        }

        let total = clock.now - started
        print("loader fuzz: \(cases) cases (seed \(seed)), \(accepted) accepted, in \(total); slowest case \(slowest.index): \(slowest.duration)")
        #expect(failures.isEmpty, "\(failures.count) failure(s), the first:\n\(failures.prefix(5).joined(separator: "\n"))")
        // Mutations must leave a fair share valid, or the engine side goes untested.
        #expect(accepted >= cases / 20, "only \(accepted) of \(cases) cases were accepted")
        #expect(slowest.duration < .seconds(20), "case \(slowest.index) took \(slowest.duration)")
    }

    // MARK: Nesting

    static let deepTexts: [(String, Int)] = [("[", 10_000), ("[", 1_000_000), ("{", 10_000), ("{", 1_000_000),
                                              ("- ", 10_000), ("- ", 1_000_000)]

    /// `levels` of `opener` as a response's JSON body.
    static func deeplyNested(_ opener: String, levels: Int) -> String {
        switch opener {
        case "[": return rule("\n      json: " + String(repeating: "[", count: levels) + String(repeating: "]", count: levels))
        case "{": return rule("\n      json: " + String(repeating: "{a: ", count: levels) + "1" + String(repeating: "}", count: levels))
        default: return rule("\n      json:\n        " + String(repeating: "- ", count: levels) + "x")
        }
    }

    @Test("Nesting 10,000 or 1,000,000 levels deep is a located problem", .timeLimit(.minutes(2)),
          arguments: deepTexts)
    func deepNesting(opener: String, levels: Int) throws {
        let text = Self.deeplyNested(opener, levels: levels)
        let diagnostic = try #require(Self.singleProblem(text))
        #expect(diagnostic.message == "nesting deeper than 256 levels of lists and mappings", "\(diagnostic)")
        #expect(diagnostic.line == 5 || diagnostic.line == 6, "\(diagnostic)")
    }

    @Test("Nesting 200 levels deep loads, and the body keeps every level")
    func nestingWithinTheLimit() throws {
        let text = Self.rule("\n      json: " + String(repeating: "[", count: 200) + String(repeating: "]", count: 200))
        let engine = try ScenarioLoader.load(yaml: text).makeEngine()
        let body = engine.respond(to: Request(method: "GET", path: "/x")).body
        #expect(body == Array((String(repeating: "[", count: 200) + String(repeating: "]", count: 200)).utf8))
    }

    // MARK: Aliases

    /// Ten anchors, each a list of ten aliases of the one before: ten billion values in all.
    static let billionLaughs: String = {
        var text = "x-anchors:\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in 1..<10 {
            text += "  a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ") + "]\n"
        }
        return text + "endpoint: GET /x\nrules:\n  - name: a\n    respond: { json: *a9 }\n"
    }()

    @Test("A billion laughs (10 levels of 10 aliases) is a located problem, at once", .timeLimit(.minutes(1)))
    func billionLaughs() throws {
        let diagnostic = try #require(Self.singleProblem(Self.billionLaughs))
        #expect(diagnostic.message.contains("alias '*a"), "\(diagnostic)")
        #expect(diagnostic.message.contains("1000000"), "\(diagnostic)")
        // Level 5 is the first whose aliases repeat more than a million values.
        #expect(diagnostic.line == 7, "\(diagnostic)")
    }

    @Test("An alias bomb used as a key is a located problem, at once", .timeLimit(.minutes(1)))
    func aliasBombAsKey() throws {
        // Composing hashes every key whole, so a key standing for a bomb must be stopped before.
        let text = Self.billionLaughs.replacingOccurrences(of: "respond: { json: *a9 }", with: "respond: { ? *a9 : 1 }")
        let diagnostic = try #require(Self.singleProblem(text))
        #expect(diagnostic.message.contains("alias '*a"), "\(diagnostic)")
    }

    /// Eighty anchors, each nested 250 levels and holding the one before: the text nests 252
    /// levels, what the last alias stands for 20,000, although it repeats fewer than a million values.
    static let deepAliases: String = {
        var text = "x:\n  a0: &a0 " + String(repeating: "[", count: 250) + "x" + String(repeating: "]", count: 250) + "\n"
        for level in 1..<80 {
            text += "  a\(level): &a\(level) " + String(repeating: "[", count: 250) + "*a\(level - 1)"
                + String(repeating: "]", count: 250) + "\n"
        }
        return text + "endpoint: GET /x\nrules:\n  - name: a\n    respond: { json: *a79 }\n"
    }()

    @Test("Aliases nesting 20,000 levels deep are a located problem, not a stack overflow", .timeLimit(.minutes(1)))
    func deepAliases() throws {
        let diagnostic = try #require(Self.singleProblem(Self.deepAliases))
        #expect(diagnostic.message == "alias '*a0' makes the nesting deeper than 256 levels of lists and mappings", "\(diagnostic)")
        #expect(diagnostic.line == 3 && diagnostic.column == 261, "\(diagnostic)")
    }

    @Test("A key that is a list of a million values is a located problem", .timeLimit(.minutes(1)))
    func hugeComplexKey() throws {
        let text = "? [" + Array(repeating: "k", count: 1_000_001).joined(separator: ",") + "]\n: 1\n"
        let diagnostic = try #require(Self.singleProblem(text))
        #expect(diagnostic.message.contains("keys that are lists or mappings"), "\(diagnostic)")
        #expect(diagnostic.line == 1, "\(diagnostic)")
    }

    @Test("Aliases repeating fewer than a million values load")
    func moderateAliases() throws {
        // Five levels of ten: a hundred thousand values, in a body.
        let anchors = Self.billionLaughs.split(separator: "\n").prefix(6).joined(separator: "\n")
        let text = anchors + "\nendpoint: GET /x\nrules:\n  - name: a\n    respond: { json: *a4 }\n"
        // The anchors sit under a key of their own, the only problem.
        let diagnostic = try #require(Self.singleProblem(text))
        #expect(diagnostic.message.hasPrefix("unknown key 'x-anchors' in a scenario file"), "\(diagnostic)")
    }

    static func allProblems(_ text: String) -> [ScenarioDiagnostic] {
        do {
            _ = try ScenarioLoader.load(yaml: text)
            return []
        } catch {
            return error.diagnostics
        }
    }

    // MARK: Sizes

    @Test("A 50 MB value is a located problem of size, found without parsing", .timeLimit(.minutes(1)))
    func fiftyMegabyteValue() throws {
        let text = Self.rule("{ text: '" + String(repeating: "x", count: 50_000_000) + "' }")
        let diagnostic = try #require(Self.singleProblem(text))
        #expect(diagnostic.line == 1 && diagnostic.column == 1)
        #expect(diagnostic.message.contains("a scenario file may be at most 16 MiB"), "\(diagnostic.message)")
    }

    @Test("A 1 MB key is reported in a message of ordinary length")
    func megabyteKey() throws {
        // Implicit keys stop at 1024 characters; an explicit one (`? `) has no limit.
        let key = String(repeating: "k", count: 1_000_000)
        let diagnostic = try #require(Self.singleProblem(Self.rule("\n      ? \(key)\n      : 1")))
        #expect(diagnostic.message.hasPrefix("unknown key 'kkkk"), "\(diagnostic.message.prefix(100))")
        #expect(diagnostic.message.count < 400, "\(diagnostic.message.count) characters")
        #expect(diagnostic.line == 5 && diagnostic.column == 9, "\(diagnostic.line):\(diagnostic.column)")
    }

    @Test("A 5 MB text body on one line loads and is sent whole", .timeLimit(.minutes(1)))
    func longLineBody() throws {
        let body = String(repeating: "0123456789", count: 500_000)
        let engine = try ScenarioLoader.load(yaml: Self.rule("{ text: \"\(body)\" }")).makeEngine()
        #expect(engine.respond(to: Request(method: "GET", path: "/x")).body.count == body.utf8.count)
    }

    @Test("A line of 100,000 JSON values loads")
    func longLineOfValues() throws {
        let values = Array(repeating: "7", count: 100_000).joined(separator: ",")
        let engine = try ScenarioLoader.load(yaml: Self.rule("{ json: [\(values)] }")).makeEngine()
        #expect(engine.respond(to: Request(method: "GET", path: "/x")).body == Array("[\(values)]".utf8))
    }

    @Test("A file over 16 MiB is refused with its size, unread", .timeLimit(.minutes(1)))
    func oversizedFile() throws {
        let folder = try TemporaryFolder()
        var data = Data(Self.rule("{ text: '").utf8)
        data.append(Data(repeating: UInt8(ascii: "x"), count: 17 * 1024 * 1024))
        data.append(Data("' }\n".utf8))
        try folder.write("big.yaml", data)
        expectSingleDiagnostic(ofDirectory: folder.path, file: folder.path + "/big.yaml", line: 1, column: 1,
                               containing: ["is \(data.count) bytes", "a scenario file may be at most 16 MiB (16777216 bytes)"])
    }

    @Test("A file of 100,000 rules loads, and its last rule answers", .timeLimit(.minutes(2)))
    func hundredThousandRules() throws {
        var text = "endpoint: GET /many\nrules:\n"
        for index in 0..<99_999 {
            text += "  - {name: r\(index), respond: {}}\n"
        }
        text += "  - {name: r99999, when: {query: {q: v99999}}, respond: {status: 201}}\n"
        let clock = ContinuousClock()
        let started = clock.now
        let set = try ScenarioLoader.load(yaml: text)
        let loaded = clock.now - started
        print("100,000 rules loaded in \(loaded)")
        #expect(set.endpoints.first?.rules.count == 100_000)
        let engine = set.makeEngine()
        #expect(engine.respond(to: Request(method: "GET", path: "/many")).bookkeeping.rule == "r0")
        let plan = engine.respond(to: Request(method: "GET", path: "/many", headers: [Field("X-Mishap-Rule", "r99999")]))
        #expect(plan.bookkeeping.rule == "r99999")
        #expect(plan.status == 201)
        #expect(loaded < .seconds(90), "loading took \(loaded)")
    }

    @Test("300,000 placeholders in one value compile in linear time", .timeLimit(.minutes(1)))
    func manyPlaceholders() throws {
        let text = Self.rule("{ text: \"" + String(repeating: "ab{{query.a}}", count: 300_000) + "\" }")
        let engine = try ScenarioLoader.load(yaml: text).makeEngine()
        let body = engine.respond(to: Request(method: "GET", path: "/x", query: [Field("a", "Z")])).body
        #expect(body == Array(String(repeating: "abZ", count: 300_000).utf8))
    }

    @Test("Names too long to compare are refused", .timeLimit(.minutes(1)), arguments: [
        ("endpoint: GET /{" + String(repeating: "p", count: 1_000_000) + "}\nrules: []\n", 1, "'endpoint' must be at most 4096 bytes long"),
        ("endpoint: GET /{" + String(repeating: "p", count: 4000) + "}\nrules:\n  - name: a\n    when:\n      path:\n        ? "
            + String(repeating: "q", count: 1_000_000) + "\n        : x\n    respond: {}\n",
         6, "names in 'path' must be at most 1024 bytes long"),
    ])
    func longNames(text: String, line: Int, message: String) throws {
        let diagnostic = try #require(Self.singleProblem(text))
        #expect(diagnostic.message == message, "\(diagnostic.message.prefix(200))")
        #expect(diagnostic.line == line, "\(diagnostic)")
    }

    // MARK: Bytes and files

    @Test("Invalid UTF-8 is located at its byte")
    func invalidUTF8() throws {
        let folder = try TemporaryFolder()
        try folder.write("bad.yaml", Data("endpoint: GET /x\nrules:\n  - name: é".utf8) + Data([0xFF, 0xFE]) + Data("\n".utf8))
        expectSingleDiagnostic(ofDirectory: folder.path, file: folder.path + "/bad.yaml", line: 3, column: 12,
                               containing: ["is not UTF-8 text", "0xFF"])
    }

    @Test("A NUL byte is located at its place")
    func nulByte() throws {
        let diagnostic = try #require(Self.singleProblem("endpoint: GET /x\nrules:\n  - name: a\u{0}b\n    respond: {}\n"))
        #expect(diagnostic.line == 3 && diagnostic.column == 12, "\(diagnostic)")
        #expect(diagnostic.message.contains("control characters are not allowed (U+0000)"), "\(diagnostic)")
    }

    @Test("Line breaks in quoted text stay out of the message's line")
    func lineBreaksInMessages() throws {
        let diagnostic = try #require(Self.singleProblem(Self.rule("{ \"sta\\ntus\\u0085\": 1 }")))
        #expect(diagnostic.message.hasPrefix("unknown key 'sta\\ntus\\u{85}'"), "\(diagnostic)")
    }

    @Test("A FIFO named like a scenario is refused without blocking", .timeLimit(.minutes(1)))
    func fifo() throws {
        let folder = try TemporaryFolder()
        try folder.write("a.yaml", Self.rule("{ status: 200 }"))
        let fifo = folder.path + "/x.yaml"
        #expect(mkfifo(fifo, 0o644) == 0)
        let diagnostics = try Self.loadWithin(seconds: 20, directory: folder.path, unblocking: fifo)
        #expect(diagnostics.count == 1, "\(diagnostics)")
        if let diagnostic = diagnostics.first {
            expect(diagnostic, file: fifo, line: 1, column: 1, containing: ["cannot be read: not a regular file"])
        }
    }

    @Test("An unreadable file is a located problem", .enabled(if: getuid() != 0, "root reads any file"))
    func unreadableFile() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("locked.yaml", Self.rule("{ status: 200 }"))
        #expect(chmod(path, 0) == 0)
        defer { chmod(path, 0o644) }
        expectSingleDiagnostic(ofDirectory: folder.path, file: path, line: 1, column: 1,
                               containing: ["cannot be read: Permission denied"])
    }

    /// Loads `directory` on another thread; when that takes longer than `seconds`, records an
    /// issue and opens `fifo` for writing, which lets a reader blocked on it go.
    static func loadWithin(seconds: Int, directory: String, unblocking fifo: String,
                           sourceLocation: SourceLocation = #_sourceLocation) throws -> [ScenarioDiagnostic] {
        final class Outcome: @unchecked Sendable {
            var diagnostics: [ScenarioDiagnostic] = []
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            do throws(ScenarioError) {
                _ = try ScenarioLoader.load(directory: directory)
            } catch {
                outcome.diagnostics = error.diagnostics
            }
            done.signal()
        }
        thread.start()
        if done.wait(timeout: .now() + .seconds(seconds)) == .timedOut {
            Issue.record("loading blocked for \(seconds) s", sourceLocation: sourceLocation)
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            done.wait()
        }
        return outcome.diagnostics
    }

    // MARK: Regular expressions and numbers

    @Test("A catastrophic regular expression compiles at once", .timeLimit(.minutes(1)))
    func catastrophicRegex() throws {
        let text = "endpoint: GET /x\nrules:\n  - name: a\n    when: { query: { q: { matches: \"(a+)+$\" } } }\n    respond: {}\n"
        let clock = ContinuousClock()
        let started = clock.now
        let set = try ScenarioLoader.load(yaml: text)
        #expect(set.endpoints.first?.rules.count == 1)
        #expect(clock.now - started < .seconds(10))
    }

    /// Numbers at and past every bound, each with the problem it must give on line 4.
    static let numberCases: [(respond: String, message: String)] = [
        ("{ status: 0 }", "'status' must be an HTTP status code from 100 to 599"),
        ("{ status: 99 }", "'status' must be an HTTP status code from 100 to 599"),
        ("{ status: 600 }", "'status' must be an HTTP status code from 100 to 599"),
        ("{ status: -1 }", "'status' must be an HTTP status code from 100 to 599"),
        ("{ status: 18446744073709551616 }", "'status' must be an HTTP status code from 100 to 599"),
        ("{ status: -99999999999999999999999 }", "'status' must be an HTTP status code from 100 to 599"),
        ("{ status: 2e2 }", "'status' must be a whole number"),
        ("{ status: 200.0 }", "'status' must be a whole number"),
        ("{ delay: 1e308 }", "'delay' must be at most a day"),
        ("{ delay: 1e308ms }", "'delay' must be at most a day"),
        ("{ delay: 1e308s }", "'delay' must be a duration in milliseconds"),
        ("{ delay: 1e999 }", "'delay' must be a duration in milliseconds"),
        ("{ delay: nan }", "'delay' must be a duration in milliseconds"),
        ("{ delay: -1 }", "'delay' must not be negative"),
        ("{ delay: -1ms }", "'delay' must not be negative"),
        ("{ delay: 99999999999h }", "'delay' must be at most a day"),
        ("{ delay: { min: 5, max: 1 } }", "'delay' needs min <= max"),
        ("{ delay: { min: -1e308, max: 1 } }", "'min' must not be negative"),
        ("{ dribble: { chunks: 0, duration: 1s } }", "'chunks' must be from 1 to 10000"),
        ("{ dribble: { chunks: -5, duration: 1s } }", "'chunks' must be from 1 to 10000"),
        ("{ dribble: { chunks: 18446744073709551616, duration: 1s } }", "'chunks' must be from 1 to 10000"),
        ("{ dribble: { chunks: 1e9, duration: 1s } }", "'chunks' must be a whole number"),
        ("{ dribble: { chunks: 5, duration: 315360000s } }", "'duration' must be at most a day"),
        ("{ text: \"{{now+99999999999999999999s}}\" }", "must be now, now+SECONDSs or now-SECONDSs"),
        ("{ text: \"{{now-9223372036854775808s}}\" }", "must be now, now+SECONDSs or now-SECONDSs"),
        ("{ text: \"{{now+315360001s}}\" }", "must be now, now+SECONDSs or now-SECONDSs"),
    ]

    @Test("Numbers past their bounds are located problems, never traps", arguments: numberCases)
    func numbers(respond: String, message: String) throws {
        let diagnostic = try #require(Self.singleProblem(Self.rule(respond)))
        #expect(diagnostic.message.contains(message), "\(diagnostic)")
        #expect(diagnostic.line == 4, "\(diagnostic)")
    }

    @Test("Numbers elsewhere: chance, cycles and lengths", arguments: [
        ("chance: 1e999\n    respond: {}", "'chance' must be a number from 0 to 1"),
        ("chance: -0.5\n    respond: {}", "'chance' must be a number from 0 to 1"),
        ("chance: nan\n    respond: {}", "'chance' must be a number from 0 to 1"),
        ("cycle: -1", "'cycle' must be a list"),
        ("cycle: [-1]", "a cycle step is a response or 'pass', not '-1'"),
        ("when: { query: { q: { length: 18446744073709551616 } } }\n    respond: {}", "'length'"),
        ("when: { query: { q: { minLength: -1 } } }\n    respond: {}", "'minLength' must not be negative"),
    ])
    func numbersElsewhere(rule: String, message: String) throws {
        let diagnostic = try #require(Self.singleProblem("endpoint: GET /x\nrules:\n  - name: a\n    \(rule)\n"))
        #expect(diagnostic.message.contains(message), "\(diagnostic)")
    }

    @Test("Largest accepted numbers load and are kept")
    func boundaryNumbers() throws {
        let set = try ScenarioLoader.load(yaml: Self.rule(
            "{ status: 599, delay: 86400000, dribble: { chunks: 10000, duration: 86400s }, text: \"{{now+315360000s}}\" }"))
        let plan = set.makeEngine().respond(to: Request(method: "GET", path: "/x"))
        #expect(plan.status == 599)
        #expect(plan.delayMilliseconds == 86_400_000)
        #expect(plan.dribble == Dribble(chunks: 10_000, milliseconds: 86_400_000))
    }

    @Test("A file with a million problems reports a thousand and counts the rest", .timeLimit(.minutes(1)))
    func manyProblems() throws {
        var text = "endpoint: GET /x\nrules:\n  - name: a\n    respond:\n"
        for index in 0..<5000 { text += "      unknown\(index): 1\n" }
        let found = Self.allProblems(text)
        #expect(found.count == 1001)
        #expect(found.first?.line == 5)
        let last = try #require(found.last)
        #expect(last.message == "4000 more problem(s) in this file not shown (at most 1000 are); the first is here", "\(last)")
        #expect(last.line == 1005, "\(last)")
    }
}
