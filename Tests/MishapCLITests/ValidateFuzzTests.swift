import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The fuzz corpus
//
// The same corpus and mutations as Tests/MishapScenariosTests/LoaderFuzzTests.swift (this target
// runs the binary and cannot import the test code of another).

/// SplitMix64: small, fast and seedable, so any fuzz case can be replayed from its number.
struct ValidateFuzzRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &self) }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

/// Valid scenario texts using every feature of the format, and the mutations applied to them.
enum ValidateFuzzCorpus {
    static let everything = """
        endpoints:
          - endpoint: GET /users/{id}/items/*
            rules:
              - name: maintenance
                when: { query: { mode: maintenance } }
                cycle:
                  - { status: 503, headers: { Retry-After: "{{now+30s}}" }, json: { error: true, id: "{{path.id}}" } }
                  - pass
              - name: slow
                when:
                  - { headers: { X-Speed: [slow, slower] } }
                  - { query: { slow: { present: true } } }
                chance: 0.5
                respond:
                  delay: { min: 10, max: 2s }
                  text: "slow {{request.method}} {{request.path}}"
              - name: trickle
                when: { query: { q: { minLength: 2, maxLength: 10, not: { prefix: x } } } }
                respond: { dribble: { chunks: 5, duration: 50ms }, base64: "aGVsbG8=", contentType: application/x-test }
              - name: broken
                when: { query: { q: { matches: "^(a+)+$" } } }
                respond: { fault: reset, delay: 5 }
              - name: hang
                when: { headers: { X-Hang: { equals: "yes" } } }
                respond: { hang: true }
              - name: fallback
                respond: { status: 200, json: { ok: true, n: 1.5, list: [1, "two", null, false], nested: { a: { b: "{{query.q}}" } } } }
          - endpoint: POST /login
            rules:
              - name: malformed
                when: { malformedBody: true }
                respond: { status: 400, text: bad }
              - name: login
                when: { body: { user.email: { suffix: "@x.com", contains: "@" }, password: { length: 8 } } }
                respond: { status: 201, headers: { Set-Cookie: "s={{body.user.email}}" }, json: { token: abc } }
              - name: other
                when: { body: { email: { oneOf: [a, b] }, password: { absent: false } } }
                respond: { status: 404, json: { error: "no {{body.email}}" } }
        """

    static let anchors = """
        endpoint: ANY /anchors
        rules:
          - name: flaky
            cycle:
              - &down { status: 500, headers: { Retry-After: "1" }, json: { error: true } }
              - *down
              - pass
          - name: ok
            respond: { json: { steps: [*down, *down] } }
        """

    static let json = """
        {"endpoint": "PUT /json/{name}", "rules": [
          {"name": "named", "when": {"path": {"name": {"oneOf": ["a", "b"]}}}, "respond": {"status": 202, "json": {"name": "{{path.name}}"}}},
          {"name": "truncated", "respond": {"fault": "truncate-chunked", "text": "abc"}}
        ]}
        """

    static let faults = """
        endpoints:
          - endpoint: DELETE /faults/{kind}
            rules:
              - { name: reset, when: { path: { kind: reset } }, respond: { fault: reset } }
              - { name: close, when: { path: { kind: close } }, respond: { fault: close, delay: 1 } }
              - { name: garbage, when: { path: { kind: garbage } }, respond: { fault: garbage, text: "not http" } }
              - { name: truncate, when: { path: { kind: truncate } }, respond: { fault: truncate, json: [1, 2, 3] } }
              - { name: chunked, when: { path: { kind: chunked } }, respond: { fault: truncate-chunked, text: abc } }
              - { name: mismatch, when: { path: { kind: mismatch } }, respond: { fault: content-length-mismatch, text: abcdef } }
              - { name: absent, when: { query: { x: { absent: true } } }, respond: { status: 418, headers: { X-A: "{{headers.X-B}}", Expires: "{{now-60s}}" } } }
          - endpoint: OPTIONS /
            rules:
              - name: options
                respond:
                  status: 200
                  headers:
                    Allow: GET, POST
                  text: |
                    multi
                    line {{query.x}}
        """

    /// The repository's scenario files, then the inline texts.
    static func bases() -> [String] {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: Paths.scenarios)) ?? [])
            .filter { $0.hasSuffix(".yaml") }.sorted()
        return files.compactMap { try? String(contentsOfFile: Paths.scenarios + "/" + $0, encoding: .utf8) }
            + [everything, anchors, json, faults]
    }

    static let methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "ANY"]

    /// `text` with every endpoint moved under `/PREFIX/`, so files of one folder do not clash.
    static func prefixingPaths(_ text: String, with prefix: String) -> String {
        methods.reduce(text) { $0.replacingOccurrences(of: "\($1) /", with: "\($1) /\(prefix)/") }
    }

    static let scalars: [String] = [
        "0", "-1", "99", "100", "599", "600", "18446744073709551616", "-9223372036854775809", "9223372036854775807",
        "1e999", "-1e999", "1e308", "1e-400", "0.5", "1.5", "-0.0", ".5", "NaN", "nan", ".nan", ".inf", "-.inf", "0x1F", "0o17",
        "", "~", "null", "true", "false", "yes", "[]", "{}", "''", "\"\"", "[1, [2, [3]]]", "{ a: 1 }",
        String(repeating: "x", count: 10_000), String(repeating: "{{", count: 50), "\"\(String(repeating: "é", count: 3000))\"",
        "5s", "-1ms", "1.5s", "0ms", "99999999999h", "1e308ms", "1e308s", "-0s", "ms", "s", "86400001",
        "\"{{now+99999999999999999999s}}\"", "\"{{now-9223372036854775808s}}\"", "\"{{now+315360000s}}\"", "\"{{now}}\"",
        "\"{{\"", "\"{{query.}}\"", "\"{{body.a..b}}\"", "\"{{headers.X}}\"", "\"{{nope}}\"", "\"\\u0000\"", "\"a\\nb\"",
        "*a", "&a x", "&a [*a]", "!!binary aGVsbG8=", "!!str 5", "!!int x", "!custom x",
        "reset", "close", "garbage", "truncate", "truncate-chunked", "content-length-mismatch", "explode",
        "GET /a/{x}/*", "GET /*/x", "BREW /", "GET", "get /lower", "GET /{}", "GET /a b",
        "pass", "(a+)+$", "\"[\"", "\"(?<=a)b\"", "\"\\\\\"", "{ min: 5, max: 1 }", "{ chunks: 0, duration: 1s }",
        "{ chunks: 18446744073709551616, duration: 315360000000 }", "[pass]", "[pass, pass]", "\"\u{202E}\"", "'''", "|", ">-",
        "files/captive-portal.html", "../outside.txt", "/etc/hostname", "files/missing.html",
    ]

    static let keys: [String] = [
        "endpoint", "rules", "endpoints", "name", "when", "chance", "respond", "cycle",
        "status", "headers", "json", "text", "base64", "file", "contentType", "delay", "hang", "dribble", "fault",
        "query", "body", "path", "malformedBody", "equals", "oneOf", "absent", "present", "empty", "length",
        "minLength", "maxLength", "matches", "prefix", "suffix", "contains", "not",
        "min", "max", "chunks", "duration", "stauts", "x-extra", "<<", "Content-Length", "Retry-After", "", "\"\"", "? a", "[k]",
    ]

    static let fragments: [String] = [
        "{", "[", "}", "]", ",", ": ", "- ", "? ", "&a ", "*a", "*a ", "!!binary ", "<<: *x", "---\n", "...\n", "\u{FEFF}",
        "\u{0}", "\t", "#", "'", "\"", "|\n", ">\n", "%YAML 1.1\n", "!!str ", "&a [*a]", "\r", "\r\n", "\u{85}", "\u{2028}",
        "*undefined", "&b &c ", "!<tag:yaml.org,2002:str> ", "@", "`", "%", "\\",
    ]

    static func mutate(_ base: [UInt8], _ random: inout ValidateFuzzRandom) -> [UInt8] {
        var bytes = base
        let count = random.below(3) == 0 ? 2 + random.below(3) : 1
        for _ in 0..<count {
            bytes = mutateOnce(bytes, &random)
        }
        return bytes
    }

    private static func mutateOnce(_ bytes: [UInt8], _ random: inout ValidateFuzzRandom) -> [UInt8] {
        let newline = UInt8(ascii: "\n")
        var lines = bytes.split(separator: newline, omittingEmptySubsequences: false).map(Array.init)
        func joined() -> [UInt8] { Array(lines.joined(separator: [newline])) }
        let line = random.below(lines.count)
        switch random.below(12) {
        case 0:
            guard !bytes.isEmpty else { return bytes }
            var changed = bytes
            let index = random.below(bytes.count)
            if random.below(2) == 0 {
                changed[index] ^= 1 << UInt8(random.below(8))
            } else {
                changed[index] = UInt8(random.below(256))
            }
            return changed
        case 1:
            lines.remove(at: line)
            if lines.isEmpty { lines = [[]] }
        case 2:
            lines.insert(lines[line], at: line)
        case 3:
            lines.swapAt(line, random.below(lines.count))
        case 4:
            let leading = lines[line].prefix(while: { $0 == UInt8(ascii: " ") }).count
            switch random.below(3) {
            case 0: lines[line].insert(contentsOf: Array(repeating: UInt8(ascii: " "), count: 1 + random.below(4)), at: 0)
            case 1: lines[line].removeFirst(min(leading, 1 + random.below(4)))
            default: lines[line].insert(UInt8(ascii: "\t"), at: random.below(leading + 1))
            }
        case 5, 6:
            var starts: [Int] = []
            for (index, byte) in lines[line].enumerated().dropLast()
            where (byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")) && lines[line][index + 1] == UInt8(ascii: " ") {
                starts.append(index + 2)
            }
            guard !starts.isEmpty else { return bytes }
            let start = random.pick(starts)
            let stops: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]")]
            let end = lines[line][start...].firstIndex(where: { stops.contains($0) }) ?? lines[line].endIndex
            lines[line].replaceSubrange(start..<end, with: Array(random.pick(scalars).utf8))
        case 7:
            let indent = lines[line].prefix(while: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "-") })
            let entry = Array(indent) + Array("\(random.pick(keys)): \(random.pick(scalars))".utf8)
            lines.insert(entry, at: random.below(lines.count + 1))
        case 8:
            var changed = bytes
            changed.insert(contentsOf: Array(random.pick(fragments).utf8), at: random.below(bytes.count + 1))
            return changed
        case 9:
            return Array(bytes.prefix(random.below(bytes.count + 1)))
        case 10:
            guard let colon = lines[line].firstIndex(of: UInt8(ascii: ":")) else { return bytes }
            let start = lines[line][..<colon].lastIndex(where: { !isWordByte($0) }).map { $0 + 1 } ?? 0
            lines[line].replaceSubrange(start..<colon, with: Array(random.pick(keys).utf8))
        default:
            switch random.below(4) {
            case 0: return Array("\u{FEFF}".utf8) + bytes
            case 1: return Array("--- ".utf8) + bytes
            case 2: return bytes + Array("\n---\n".utf8) + bytes
            default: lines.insert(lines[random.below(lines.count)], at: random.below(lines.count + 1))
            }
        }
        return joined()
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        byte >= 0x80 || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    /// The most lines a YAML reader can count in `bytes` (`\n`, `\r`, NEL, LS and PS break lines).
    static func maximumLine(_ bytes: [UInt8]) -> Int {
        var lines = 1
        for index in bytes.indices {
            switch bytes[index] {
            case 0x0A, 0x0D: lines += 1
            case 0x85 where index > 0 && bytes[index - 1] == 0xC2: lines += 1
            case 0xA8...0xA9 where index > 1 && bytes[index - 1] == 0x80 && bytes[index - 2] == 0xE2: lines += 1
            default: break
            }
        }
        return lines
    }
}

// MARK: - Tests

/// `mishap validate` on mutated and pathological scenario files: it always exits 0 or 1, in
/// time, and prints every problem as `file:line:column: message`.
@Suite("mishap validate fuzzing")
struct ValidateFuzzTests {
    /// A folder to validate: its path, and the most lines each of its files can have.
    struct Folder: Sendable {
        let path: String
        let maximumLines: [String: Int]
    }

    /// Writes `files` into a new sub-folder `name` of `parent`.
    static func folder(_ name: String, in parent: TemporaryFolder, files: [(name: String, bytes: [UInt8])]) throws -> Folder {
        let path = parent.path + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for file in files {
            guard FileManager.default.createFile(atPath: path + "/" + file.name, contents: Data(file.bytes)) else {
                throw CocoaError(.fileWriteUnknown)
            }
        }
        return Folder(path: path, maximumLines: Dictionary(uniqueKeysWithValues: files.map {
            ($0.name, ValidateFuzzCorpus.maximumLine($0.bytes))
        }))
    }

    /// What is wrong with a run of `mishap validate FOLDER`, as readable lines; empty when it
    /// exited 0 with the summary line, or 1 with located problems and their count.
    static func problems(of result: Finished, folder: Folder) -> [String] {
        let path = folder.path
        switch result.status {
        case 0:
            var found: [String] = []
            if !(result.standardOutput.hasPrefix(path + ": ") && result.standardOutput.hasSuffix(": valid\n")
                && result.standardOutput.filter(\.isNewline).count == 1) {
                found.append("exit 0 without the summary line: \(result.standardOutput)")
            }
            if !result.standardError.isEmpty { found.append("exit 0 with standard error: \(result.standardError)") }
            return found
        case 1:
            var found: [String] = []
            if !result.standardOutput.isEmpty { found.append("exit 1 with standard output: \(result.standardOutput)") }
            var lines = result.standardError.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard lines.last == "" else { return ["standard error does not end with a line break"] }
            lines.removeLast()
            guard let summary = lines.popLast() else { return ["exit 1 with nothing on standard error"] }
            if summary != "\(path): \(lines.count) problem(s)" {
                found.append("the last line is not '\(path): \(lines.count) problem(s)': \(summary)")
            }
            for line in lines {
                if let problem = Self.problem(withLocated: line, folder: folder) { found.append("\(problem): \(line)") }
            }
            return found
        case nil:
            return ["killed by a signal or still running at the time limit; stderr: \(result.standardError.suffix(2000))"]
        case let status?:
            return ["exit status \(status); stderr: \(result.standardError.suffix(2000))"]
        }
    }

    /// Why `line` is not `FOLDER/FILE:LINE:COLUMN: MESSAGE` for a file of the folder, or nil.
    static func problem(withLocated line: String, folder: Folder) -> String? {
        guard line.hasPrefix(folder.path + "/") else { return "not under the folder" }
        let fields = line.dropFirst(folder.path.count + 1).split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
        guard fields.count == 4 else { return "not file:line:column: message" }
        guard let maximum = folder.maximumLines[String(fields[0])] else { return "names a file not in the folder" }
        guard let number = Int(fields[1]), (1...maximum).contains(number) else { return "line outside 1...\(maximum)" }
        guard let column = Int(fields[2]), column >= 1 else { return "column below 1" }
        guard fields[3].hasPrefix(" "), !fields[3].trimmingCharacters(in: .whitespaces).isEmpty else { return "no message" }
        return nil
    }

    /// Runs `mishap validate` on each folder, two at a time; returns the problems found, by folder.
    static func validate(_ folders: [Folder], timeout: Duration = .seconds(60)) async throws -> [(folder: Folder, outcome: Int32?, problems: [String])] {
        try await withThrowingTaskGroup(of: (Int, Int32?, [String]).self) { group in
            var next = 0
            var results: [(folder: Folder, outcome: Int32?, problems: [String])?] = Array(repeating: nil, count: folders.count)
            func start() {
                let index = next
                next += 1
                group.addTask {
                    let result = try await runMishap(["validate", folders[index].path], timeout: timeout)
                    return (index, result.status, Self.problems(of: result, folder: folders[index]))
                }
            }
            for _ in 0..<min(2, folders.count) { start() }
            while let (index, status, problems) = try await group.next() {
                results[index] = (folders[index], status, problems)
                if next < folders.count { start() }
            }
            return results.compactMap { $0 }
        }
    }

    @Test("640 mutated files in 80 folders: exit 0 or 1, every problem located", .timeLimit(.minutes(3)))
    func mutationCorpus() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["MISHAP_FUZZ_SEED"].flatMap { Int($0) } ?? 0x5EED)
        let bases = ValidateFuzzCorpus.bases()
        let portal = try Data(contentsOf: URL(fileURLWithPath: Paths.scenarios + "/files/captive-portal.html"))
        let parent = try TemporaryFolder()
        var folders: [Folder] = []
        for index in 0..<80 {
            var random = ValidateFuzzRandom(seed: seed &+ UInt64(index) &* 0x1_0000_0001)
            // Odd folders change one file of eight and may stay valid; even ones change all eight.
            let files = (0..<8).map { number -> (name: String, bytes: [UInt8]) in
                let base = Array(ValidateFuzzCorpus.prefixingPaths(random.pick(bases), with: "f\(number)").utf8)
                let changed = index % 2 == 0 || number == 0
                return ("case\(number).yaml", changed ? ValidateFuzzCorpus.mutate(base, &random) : base)
            }
            let folder = try Self.folder("folder\(index)", in: parent, files: files)
            try FileManager.default.createDirectory(atPath: folder.path + "/files", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: folder.path + "/files/captive-portal.html", contents: portal)
            folders.append(folder)
        }

        let clock = ContinuousClock()
        let started = clock.now
        let results = try await Self.validate(folders)
        let elapsed = clock.now - started
        let valid = results.filter { $0.outcome == 0 }.count
        print("validate fuzz: \(folders.count * 8) files in \(folders.count) folders (seed \(seed)), \(valid) folder(s) valid, in \(elapsed)")
        let failed = results.filter { !$0.problems.isEmpty }
        #expect(failed.isEmpty, """
            \(failed.count) folder(s) failed; the first: \(failed.first.map { "\($0.folder.path): \($0.problems.prefix(5).joined(separator: "\n"))" } ?? "")
            """)
        #expect(results.count == folders.count)
        #expect(valid > 0, "no folder was valid: the success output went untested")
        #expect(valid < folders.count, "every folder was valid: the problem output went untested")
    }

    // MARK: Pathological files

    /// A pathological scenario folder and what `mishap validate` must say about it.
    struct Pathology: Sendable, CustomTestStringConvertible {
        let name: String
        /// The files, made when the test runs (some are large).
        let files: @Sendable () -> [(name: String, bytes: [UInt8])]
        /// nil: the folder is valid; otherwise the one problem expected, as the file's line
        /// (nil: any) and a part of the message.
        let problem: (line: Int?, message: String)?

        var testDescription: String { name }
    }

    static func rule(_ respond: String) -> String {
        "endpoint: GET /x\nrules:\n  - name: a\n    respond: \(respond)\n"
    }

    static func text(_ text: @escaping @Sendable () -> String) -> @Sendable () -> [(name: String, bytes: [UInt8])] {
        { [("x.yaml", Array(text().utf8))] }
    }

    static let billionLaughs: String = {
        var text = "x-anchors:\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in 1..<10 {
            text += "  a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ") + "]\n"
        }
        return text + "endpoint: GET /x\nrules:\n  - name: a\n    respond: { json: *a9 }\n"
    }()

    static let nesting = "nesting deeper than 256 levels of lists and mappings"

    static let pathologies: [Pathology] = [
        Pathology(name: "10,000 levels of [", files: text { rule("\n      json: " + String(repeating: "[", count: 10_000)) },
                  problem: (5, nesting)),
        Pathology(name: "1,000,000 levels of [", files: text { rule("\n      json: " + String(repeating: "[", count: 1_000_000)) },
                  problem: (5, nesting)),
        Pathology(name: "10,000 levels of {", files: text { rule("\n      json: " + String(repeating: "{a: ", count: 10_000)) },
                  problem: (5, nesting)),
        Pathology(name: "1,000,000 levels of {", files: text { rule("\n      json: " + String(repeating: "{a: ", count: 1_000_000)) },
                  problem: (5, nesting)),
        Pathology(name: "10,000 levels of - ", files: text { rule("\n      json:\n        " + String(repeating: "- ", count: 10_000) + "x") },
                  problem: (6, nesting)),
        Pathology(name: "1,000,000 levels of - ", files: text { rule("\n      json:\n        " + String(repeating: "- ", count: 1_000_000) + "x") },
                  problem: (6, nesting)),
        Pathology(name: "a billion laughs", files: text { billionLaughs }, problem: (7, "alias '*a4' brings the values repeated by aliases past 1000000")),
        Pathology(name: "an alias bomb as a key",
                  files: text { billionLaughs.replacingOccurrences(of: "respond: { json: *a9 }", with: "respond: { ? *a9 : 1 }") },
                  problem: (7, "alias '*a4'")),
        Pathology(name: "aliases nesting 20,000 levels", files: text {
            var text = "x:\n  a0: &a0 " + String(repeating: "[", count: 250) + "x" + String(repeating: "]", count: 250) + "\n"
            for level in 1..<80 {
                text += "  a\(level): &a\(level) " + String(repeating: "[", count: 250) + "*a\(level - 1)"
                    + String(repeating: "]", count: 250) + "\n"
            }
            return text + "endpoint: GET /x\nrules:\n  - name: a\n    respond: { json: *a79 }\n"
        }, problem: (3, "alias '*a0' makes the nesting deeper than 256 levels")),
        Pathology(name: "a 50 MB value", files: text { rule("{ text: '" + String(repeating: "x", count: 50_000_000) + "' }") },
                  problem: (1, "a scenario file may be at most 16 MiB (16777216 bytes)")),
        Pathology(name: "a 1 MB key", files: text { rule("\n      ? " + String(repeating: "k", count: 1_000_000) + "\n      : 1") },
                  problem: (5, "unknown key 'kkkkkkkk")),
        Pathology(name: "a 10 MB value", files: text { rule("{ text: '" + String(repeating: "x", count: 10_000_000) + "' }") },
                  problem: nil),
        Pathology(name: "100,000 rules", files: text {
            "endpoint: GET /many\nrules:\n" + (0..<100_000).map { "  - {name: r\($0), respond: {}}\n" }.joined()
        }, problem: nil),
        Pathology(name: "a line of 100,000 values",
                  files: text { rule("{ json: [" + Array(repeating: "7", count: 100_000).joined(separator: ",") + "] }") }, problem: nil),
        Pathology(name: "300,000 placeholders", files: text { rule("{ text: \"" + String(repeating: "ab{{query.a}}", count: 300_000) + "\" }") },
                  problem: nil),
        Pathology(name: "invalid UTF-8", files: {
            [("x.yaml", Array("endpoint: GET /x\nrules:\n  - name: é".utf8) + [0xFF, 0xFE, 0x0A])]
        }, problem: (3, "is not UTF-8 text: byte 0xFF")),
        Pathology(name: "a NUL byte", files: text { "endpoint: GET /x\nrules:\n  - name: a\u{0}b\n    respond: {}\n" },
                  problem: (3, "control characters are not allowed (U+0000)")),
        Pathology(name: "a catastrophic regular expression",
                  files: text { "endpoint: GET /x\nrules:\n  - name: a\n    when: { query: { q: { matches: \"(a+)+$\" } } }\n    respond: {}\n" },
                  problem: nil),
        Pathology(name: "a 1 MB path parameter", files: text { "endpoint: GET /{" + String(repeating: "p", count: 1_000_000) + "}\nrules: []\n" },
                  problem: (1, "'endpoint' must be at most 4096 bytes long")),
        Pathology(name: "a quoted line break in a key", files: text { rule("{ \"sta\\ntus\": 1 }") },
                  problem: (4, "unknown key 'sta\\ntus'")),
    ]

    @Test("Pathological files: validate answers in time with located problems", .timeLimit(.minutes(3)),
          arguments: pathologies)
    func pathological(_ pathology: Pathology) async throws {
        let parent = try TemporaryFolder()
        let folder = try Self.folder("case", in: parent, files: pathology.files())
        let result = try await runMishap(["validate", folder.path], timeout: .seconds(120))
        let problems = Self.problems(of: result, folder: folder)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n").prefix(3000))")
        if let expected = pathology.problem {
            #expect(result.status == 1)
            let lines = result.standardError.split(separator: "\n").dropLast()
            #expect(lines.count == 1, "\(result.standardError.prefix(3000))")
            if let line = lines.first {
                let prefix = folder.path + "/x.yaml:" + (expected.line.map { "\($0):" } ?? "")
                #expect(line.hasPrefix(prefix), "\(line.prefix(500))")
                #expect(line.contains(expected.message), "\(line.prefix(500))")
                #expect(line.count < 1000, "a problem of \(line.count) characters")
            }
        } else {
            #expect(result.status == 0, "\(result.standardError.prefix(3000))")
        }
    }

    @Test("A FIFO named x.yaml is refused without blocking", .timeLimit(.minutes(1)))
    func fifo() async throws {
        let parent = try TemporaryFolder()
        let folder = try Self.folder("case", in: parent, files: [("a.yaml", Array(Self.rule("{ status: 200 }").utf8))])
        #expect(mkfifo(folder.path + "/x.yaml", 0o644) == 0)
        let result = try await runMishap(["validate", folder.path], timeout: .seconds(30))
        #expect(Self.problems(of: result, folder: Folder(path: folder.path, maximumLines: ["a.yaml": 5, "x.yaml": 1])).isEmpty,
                "\(result)")
        #expect(result.standardError.hasPrefix(folder.path + "/x.yaml:1:1: cannot be read: not a regular file\n"), "\(result.standardError)")
    }

    @Test("An unreadable file is a located problem", .enabled(if: getuid() != 0, "root reads any file"))
    func unreadable() async throws {
        let parent = try TemporaryFolder()
        let folder = try Self.folder("case", in: parent, files: [("x.yaml", Array(Self.rule("{ status: 200 }").utf8))])
        #expect(chmod(folder.path + "/x.yaml", 0) == 0)
        defer { chmod(folder.path + "/x.yaml", 0o644) }
        let result = try await runMishap(["validate", folder.path], timeout: .seconds(30))
        #expect(Self.problems(of: result, folder: folder).isEmpty, "\(result)")
        #expect(result.standardError.hasPrefix(folder.path + "/x.yaml:1:1: cannot be read: Permission denied\n"), "\(result.standardError)")
    }

    /// Numbers at and past every bound, one file each, with the problem each must give on line 4.
    static let numberCases: [(respond: String, message: String)] = [
        ("{ status: 0 }", "'status' must be an HTTP status code from 100 to 599"),
        ("{ status: 99 }", "'status' must be an HTTP status code from 100 to 599"),
        ("{ status: 600 }", "'status' must be an HTTP status code from 100 to 599"),
        ("{ status: 18446744073709551616 }", "'status' must be an HTTP status code from 100 to 599"),
        ("{ delay: 1e308 }", "'delay' must be at most a day"),
        ("{ delay: 1e999 }", "'delay' must be a duration in milliseconds"),
        ("{ delay: -1 }", "'delay' must not be negative"),
        ("{ delay: 99999999999h }", "'delay' must be a duration in milliseconds"),
        ("{ dribble: { chunks: 0, duration: 1s } }", "'chunks' must be from 1 to 10000"),
        ("{ dribble: { chunks: 18446744073709551616, duration: 1s } }", "'chunks' must be from 1 to 10000"),
        ("{ dribble: { chunks: 5, duration: 315360000s } }", "'duration' must be at most a day"),
        ("{ text: \"{{now-9223372036854775808s}}\" }", "must be now, now+SECONDSs or now-SECONDSs"),
    ]

    @Test("Numbers past their bounds: one located problem per file, never a trap", .timeLimit(.minutes(1)))
    func numbers() async throws {
        let parent = try TemporaryFolder()
        let files = Self.numberCases.enumerated().map { index, number in
            ("n\(index).yaml", Array(Self.rule(number.respond).replacingOccurrences(of: "GET /x", with: "GET /n\(index)").utf8))
        }
        let folder = try Self.folder("case", in: parent, files: files)
        let result = try await runMishap(["validate", folder.path], timeout: .seconds(30))
        #expect(Self.problems(of: result, folder: folder).isEmpty, "\(result)")
        let lines = result.standardError.split(separator: "\n").map(String.init)
        #expect(lines.count == Self.numberCases.count + 1, "\(result.standardError)")
        for (index, number) in Self.numberCases.enumerated() {
            let prefix = folder.path + "/n\(index).yaml:4:"
            #expect(lines.contains { $0.hasPrefix(prefix) && $0.contains(number.message) }, "no '\(prefix) ... \(number.message)' in:\n\(result.standardError)")
        }
    }
}
