import Foundation
import MishapTestSupport
import Testing

/// What README.md and docs/*.md point at exists: the README stays a short front door, every
/// relative link and `#anchor` resolves, every `--flag` the pages name is one of `mishap`'s (or
/// of another tool the pages use), and the shell blocks that cannot run name commands and `make`
/// targets that exist.
@Suite("Documentation: links, flags and commands", .onBlockingThreads)
struct DocumentationReferenceTests {
    @Test("The README is a front door: under 400 lines")
    func readmeIsShort() throws {
        let readme = try #require(try DocumentationPages.load().page("README.md"))
        #expect(readme.lines.count < 400, "README.md has \(readme.lines.count) lines: move reference text to docs/")
    }

    @Test("Every relative link and #anchor of README.md and docs/*.md resolves")
    func linksResolve() throws {
        let pages = try DocumentationPages.load()
        var anchors: [String: Set<String>] = [:]
        func anchorsOf(_ path: String) throws -> Set<String> {
            if let known = anchors[path] { return known }
            let lines = try String(contentsOfFile: Paths.repository + "/" + path, encoding: .utf8).components(separatedBy: "\n")
            let found = DocumentationPages.Page(path: path, lines: lines).anchors
            anchors[path] = found
            return found
        }
        var checked = 0
        for page in pages.pages {
            for (line, target) in page.links where !["http://", "https://", "mailto:"].contains(where: target.hasPrefix) {
                checked += 1
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let folder = (page.path as NSString).deletingLastPathComponent
                let path = parts[0].isEmpty ? page.path : Self.normalized(folder.isEmpty ? parts[0] : folder + "/" + parts[0])
                guard FileManager.default.fileExists(atPath: Paths.repository + "/" + path) else {
                    Issue.record("\(page.path):\(line): \(target): no file \(path)")
                    continue
                }
                if parts.count == 2, path.hasSuffix(".md") {
                    #expect(try anchorsOf(path).contains(parts[1]), "\(page.path):\(line): \(target): \(path) has no heading #\(parts[1])")
                }
            }
        }
        #expect(checked > 100, "only \(checked) links found")
    }

    /// `path` without `.` and `a/..` segments, from the repository's root.
    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." {
            if part == "..", !parts.isEmpty { parts.removeLast() } else { parts.append(part) }
        }
        return parts.joined(separator: "/")
    }

    /// Flags of other tools the pages use, with the tool.
    static let otherTools: [String: String] = [
        "--cacert": "curl", "--pinnedpubkey": "curl", "--data-binary": "curl", "--resolve": "curl",
        "--fresh": "update-ca-certificates", "--latency": "wrk", "--mishap": "benchmarks/rule_load.py",
        "--seconds": "scripts/slowloris.py", "--rm": "docker", "--user": "docker",
    ]

    /// Every long option of every `mishap` command, from `--experimental-dump-help`.
    static func mishapFlags() async throws -> Set<String> {
        let dump = try await runMishap(["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.standardOutput.utf8)) as? [String: Any])
        var flags: Set<String> = []
        func walk(_ command: [String: Any]) {
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                for name in argument["names"] as? [[String: Any]] ?? [] where name["kind"] as? String == "long" {
                    if let text = name["name"] as? String { flags.insert("--" + text) }
                }
            }
            for subcommand in command["subcommands"] as? [[String: Any]] ?? [] { walk(subcommand) }
        }
        walk(try #require(root["command"] as? [String: Any]))
        #expect(flags.contains("--upstream") && flags.contains("--strict") && flags.contains("--dir"), "\(flags)")
        return flags
    }

    @Test("Every --flag the pages name is an option of a mishap command")
    func flagsExist() async throws {
        let flags = try await Self.mishapFlags()
        for page in try DocumentationPages.load().pages {
            for (index, line) in page.lines.enumerated() {
                for match in line.matches(of: #/(?:^|[^\w-])(--[a-z][a-z0-9-]*)/#) {
                    let flag = String(match.output.1)
                    #expect(flags.contains(flag) || Self.otherTools[flag] != nil,
                            "\(page.path):\(index + 1): \(flag) is no option of mishap (mishap help COMMAND lists them)")
                }
            }
        }
    }

    @Test("Shell blocks that cannot run parse, and name commands and make targets that exist")
    func syntaxBlocksNameWhatExists() async throws {
        let flags = try await Self.mishapFlags()
        let makefile = try String(contentsOfFile: Paths.repository + "/Makefile", encoding: .utf8)
        let targets = Set(makefile.components(separatedBy: "\n").compactMap { line -> String? in
            guard let colon = line.firstIndex(of: ":"), !line.hasPrefix("\t"), !line.hasPrefix("#"), !line.contains("=") else { return nil }
            return String(line[..<colon])
        }.flatMap { $0.split(separator: " ").map(String.init) })
        for block in try DocumentationPages.load().blocks where block.kind == "syntax" {
            let folder = try TemporaryFolder()
            let script = try folder.write("block.sh", block.text + "\n")
            let parsed = try await run("/bin/bash", ["-n", script])
            #expect(parsed.status == 0, "\(block): bash -n: \(parsed.standardError)")
            var commands: [[String]] = []
            for line in block.text.replacingOccurrences(of: "\\\n", with: " ").components(separatedBy: "\n") {
                let code = line.components(separatedBy: " #")[0]
                for part in code.components(separatedBy: "&&") {
                    for command in part.components(separatedBy: "|") { commands.append(command.split(separator: " ").map(String.init)) }
                }
            }
            for words in commands {
                let command = Array(words.drop { $0 == "sudo" })
                if command.first == "make" {
                    for target in command.dropFirst() where !target.contains("=") {
                        #expect(targets.contains(target), "\(block): make \(target): no such target in the Makefile")
                    }
                }
                if command.first == "mishap" {
                    // `--` ends the options (`mishap sweep ... -- COMMAND`): the words after it are the command's.
                    for flag in command.prefix(while: { $0 != "--" }) where flag.hasPrefix("--") {
                        #expect(flags.contains(String(flag.prefix { $0 != "=" })), "\(block): \(flag) is no option of mishap")
                    }
                }
            }
        }
    }
}
