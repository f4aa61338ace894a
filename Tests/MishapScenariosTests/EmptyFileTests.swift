import Foundation
import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// A scenario file with nothing in it (0 bytes, blank lines, comments) is refused as `---` is:
/// a file caught empty while being written must not load as a set with no endpoints.
@Suite("Empty scenario files")
struct EmptyFileTests {
    static let good = "endpoint: GET /a\nrules:\n  - name: a\n    respond: { text: a }\n"

    @Test("A 0-byte file is an error at its first line")
    func zeroBytes() throws {
        let folder = try TemporaryFolder()
        try folder.write("a.yaml", "")
        expectSingleDiagnostic(ofDirectory: folder.path, file: folder.path + "/a.yaml", line: 1, column: 1,
                               containing: ["a scenario file must be a mapping", "is empty"])
    }

    @Test("A file of blank lines, or of comments, is an error at its first line",
          arguments: ["\n", "   \n\n  ", "\r\n\r\n", "# nothing yet\n", "\n  # indented comment\n\n# another", "#"])
    func onlyCommentsAndBlankLines(_ text: String) throws {
        let folder = try TemporaryFolder()
        try folder.write("a.yml", text)
        expectSingleDiagnostic(ofDirectory: folder.path, file: folder.path + "/a.yml", line: 1, column: 1,
                               containing: ["a scenario file must be a mapping", "only comments and blank lines"])
    }

    @Test("A file with a document marker and nothing else is refused as before")
    func emptyDocument() throws {
        let folder = try TemporaryFolder()
        try folder.write("a.yaml", "---\n")
        expectSingleDiagnostic(ofDirectory: folder.path, file: folder.path + "/a.yaml", line: 2, column: 1,
                               containing: ["a scenario file must be a mapping"])
    }

    @Test("An empty file next to good ones fails the whole folder, reported alone")
    func emptyAmongGoodFiles() throws {
        let folder = try TemporaryFolder()
        try folder.write("a.yaml", Self.good)
        try folder.write("b.json", "")
        try folder.write("sub/c.yaml", "# c\n")
        let found = diagnostics(ofDirectory: folder.path)
        try #require(found.count == 2, "\(found)")
        expect(found[0], file: folder.path + "/b.json", line: 1, column: 1, containing: ["is empty"])
        expect(found[1], file: folder.path + "/sub/c.yaml", line: 1, column: 1, containing: ["only comments and blank lines"])
    }

    @Test("Empty inline text is refused too")
    func emptyInlineText() {
        expectSingleDiagnostic("", line: 1, column: 1, containing: ["a scenario file must be a mapping", "is empty"])
        expectSingleDiagnostic("# later\n", line: 1, column: 1, containing: ["only comments and blank lines"])
    }

    @Test("A file with content after a comment still loads")
    func commentThenContent() throws {
        let folder = try TemporaryFolder()
        try folder.write("a.yaml", "# the login endpoint\n\n" + Self.good)
        let set = try ScenarioLoader.load(directory: folder.path)
        #expect(set.endpoints.map(\.name) == ["GET /a"])
    }
}
