import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `mishap validate` on mutated and pathological scenario files: it always exits 0 or 1, in
/// time, and prints every problem as `file:line:column: message`.
@Suite("mishap validate fuzzing", .onBlockingThreads)
struct ValidateFuzzTests {
    /// The corpus's mutations, with paths of body files among the values.
    static let mutator = ScenarioMutator(scalars: ScenarioMutator.standardScalars + ScenarioMutator.fileScalars)

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
            ($0.name, ScenarioCorpus.maximumLine($0.bytes))
        }))
    }

    /// What is wrong with a run of `mishap validate FOLDER`, as readable lines; empty when it
    /// exited 0 with the summary line, or 1 with located problems and their count.
    static func problems(of result: Finished, folder: Folder) -> [String] {
        let path = folder.path
        switch result.status {
        case 0:
            var found: [String] = []
            // Valid, maybe with warnings (rules that can never answer): each located on standard
            // error, and counted in the summary line.
            let warnings = result.standardError.split(separator: "\n").map(String.init)
            let summary = warnings.isEmpty ? ": valid\n" : ": valid with \(warnings.count) warning(s)\n"
            if !(result.standardOutput.hasPrefix(path + ": ") && result.standardOutput.hasSuffix(summary)
                && result.standardOutput.filter(\.isNewline).count == 1) {
                found.append("exit 0 without the summary line: \(result.standardOutput)")
            }
            if let stray = warnings.first(where: { !($0.hasPrefix(path + "/") && $0.contains(": warning: ")) }) {
                found.append("exit 0 with standard error that is not a located warning: \(stray)")
            }
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
        let bases = ScenarioCorpus.bases(scenarios: Paths.scenarios)
        let portal = try Data(contentsOf: URL(fileURLWithPath: Paths.scenarios + "/files/captive-portal.html"))
        let parent = try TemporaryFolder()
        var folders: [Folder] = []
        for index in 0..<80 {
            var random = SeededRandom(seed: seed &+ UInt64(index) &* 0x1_0000_0001)
            // Odd folders change one file of eight and may stay valid; even ones change all eight.
            let files = (0..<8).map { number -> (name: String, bytes: [UInt8]) in
                let base = Array(ScenarioCorpus.prefixingPaths(random.pick(bases), with: "f\(number)").utf8)
                let changed = index % 2 == 0 || number == 0
                return ("case\(number).yaml", changed ? Self.mutator.mutate(base, &random) : base)
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
        ("{ delay: 99999999999h }", "'delay' must be at most a day"),
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
