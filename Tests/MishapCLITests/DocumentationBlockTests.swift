import Foundation
import MishapTestSupport
import Testing

/// Every code block of README.md and docs/*.md that a reader would copy says how it is checked
/// (`DocumentationPages`), and each is: scenario files load, fragments load inside a file, Swift
/// is in a file a test target compiles, a manifest evaluates, JSON parses, and the shell blocks
/// that cannot run at least parse and name commands that exist. The runnable blocks run in
/// `DocumentationStoryTests`.
@Suite("Documentation: code blocks", .onBlockingThreads)
struct DocumentationBlockTests {
    static let kinds: Set<String> = ["scenario", "fragment", "console", "sh", "python", "swift", "manifest", "json", "syntax", "example"]

    @Test("Every block a reader would copy carries a marker a test consumes")
    func everyBlockIsChecked() throws {
        let pages = try DocumentationPages.load()
        #expect(pages.pages.count > 10, "\(pages.pages.map(\.path))")
        for block in pages.blocks where DocumentationBlock.checkedLanguages.contains(block.language) || block.language.isEmpty {
            #expect(!block.language.isEmpty, "\(block): a code block without a language: say `text` for output, or the language and a marker")
            guard let kind = block.kind else {
                Issue.record("\(block): a ```\(block.language) block without <!-- check: ... --> on the line before it (`text` if nothing is to run)")
                continue
            }
            #expect(Self.kinds.contains(kind), "\(block): unknown check '\(kind)'")
            if kind == "syntax" { #expect(block.reason?.isEmpty == false, "\(block): say why it cannot run: check: syntax (REASON)") }
            if let file = block.option("file") { #expect(!file.hasPrefix("/") && !file.contains(".."), "\(block): file= stays in the story's folder") }
        }
    }

    @Test("Each `check: example NAME` block is read by a test that names it")
    func examplesHaveTheirTests() throws {
        let sources = try Self.testSources()
        for block in try DocumentationPages.load().blocks where block.kind == "example" {
            let name = try #require(block.marker?.dropFirst().first, "\(block): check: example NAME")
            #expect(sources.contains("\"\(name)\""), "\(block): no test under Tests/ names \"\(name)\"")
        }
    }

    @Test("Scenario files and fragments load, with no warning")
    func scenariosLoad() async throws {
        for block in try DocumentationPages.load().blocks where block.kind == "fragment" || (block.kind == "scenario" && block.option("file") == nil) {
            let folder = try TemporaryFolder()
            if block.has("with-defaults") { try FileManager.default.copyItem(atPath: Paths.scenarios, toPath: folder.path + "/scenarios") }
            try folder.write("scenarios/doc-block.yaml", try Self.scenarioFile(block))
            let result = try await runMishap(["validate", "--strict", folder.path + "/scenarios"])
            #expect(result.status == 0, "\(block): \(result.standardOutput)\(result.standardError)")
            if let path = block.option("in") {
                let file = try String(contentsOfFile: Paths.repository + "/" + path, encoding: .utf8)
                #expect(file.contains(block.text), "\(block) is not, word for word, part of \(path)")
            }
        }
    }

    /// The file a `scenario` or `fragment` block is checked as.
    static func scenarioFile(_ block: DocumentationBlock) throws -> String {
        guard block.kind == "fragment" else { return block.text + "\n" }
        let lines = block.text.components(separatedBy: "\n")
        switch block.marker?.dropFirst().first {
        case "rule":
            let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
            return "endpoint: ANY /fragment\nrules:\n" + lines.map { "  " + $0.dropFirst(indent) }.joined(separator: "\n") + "\n"
        case "when":
            return "endpoint: ANY /fragment\nrules:\n  - name: fragment\n" + lines.map { "    " + $0 }.joined(separator: "\n")
                + "\n    respond: { status: 204 }\n"
        default:
            Issue.record("\(block): check: fragment rule|when")
            return ""
        }
    }

    @Test("Swift blocks are, word for word, in a file a test target compiles")
    func swiftBlocksAreCompiled() throws {
        for block in try DocumentationPages.load().blocks where block.kind == "swift" {
            let words = block.marker ?? []
            guard words.count == 3, words[1] == "in", words[2].hasPrefix("Tests/") else {
                Issue.record("\(block): check: swift in Tests/TARGET/FILE.swift")
                continue
            }
            let file = try String(contentsOfFile: Paths.repository + "/" + words[2], encoding: .utf8)
            #expect(Self.trimmedLines(file).joined(separator: "\n").contains(Self.trimmedLines(block.text).joined(separator: "\n")),
                    "\(block) is not, indentation aside, in \(words[2])")
        }
    }

    /// Lines without their leading spaces.
    static func trimmedLines(_ text: String) -> [String] {
        text.components(separatedBy: "\n").map { String($0.drop { $0 == " " }) }
    }

    @Test("A Package.swift part evaluates, and depends on a branch while the repository has no tags")
    func manifestsEvaluate() async throws {
        let tags = try await run("/usr/bin/git", ["-C", Paths.repository, "tag", "--list"])
        for block in try DocumentationPages.load().blocks where block.kind == "manifest" {
            let folder = try TemporaryFolder()
            try folder.write("Package.swift", "// swift-tools-version:6.0\nimport PackageDescription\n\nlet package = Package(\n    name: \"MyApp\",\n"
                             + block.text + "\n)\n")
            let result = try await run("/usr/bin/env", ["swift", "package", "dump-package"], currentDirectory: folder.path,
                                       timeout: .seconds(120))
            #expect(result.status == 0, "\(block): \(result.standardError)")
            let manifest = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
            let dependencies = manifest?["dependencies"] as? [[String: Any]] ?? []
            let mishap = dependencies.compactMap { ($0["sourceControl"] as? [[String: Any]])?.first }.first { $0["identity"] as? String == "mishap" }
            #expect(mishap != nil, "\(block): no dependency whose identity is mishap: \(result.standardOutput)")
            if tags.status == 0 && tags.standardOutput.isEmpty {
                let requirement = mishap?["requirement"] as? [String: Any] ?? [:]
                #expect(requirement["branch"] != nil || requirement["revision"] != nil,
                        "\(block): the repository has no tags, so a version requirement cannot resolve: \(requirement)")
            }
        }
    }

    @Test("JSON blocks parse")
    func jsonParses() throws {
        for block in try DocumentationPages.load().blocks where block.kind == "json" {
            #expect((try? JSONSerialization.jsonObject(with: Data(block.text.utf8))) != nil, "\(block) is not JSON")
        }
    }

    /// Every `.swift` and `.py` file under Tests/, as one text.
    static func testSources() throws -> String {
        let root = Paths.repository + "/Tests"
        let paths = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []
        return try paths.filter { $0.hasSuffix(".swift") || $0.hasSuffix(".py") }
            .map { try String(contentsOfFile: root + "/" + $0, encoding: .utf8) }.joined(separator: "\n")
    }
}
