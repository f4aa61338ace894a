import Foundation
import MishapTestSupport
import Testing

/// Every runnable block of README.md and docs/*.md (`console`, `sh`, `python`, and the files a
/// story writes), run as the page says, story by story (`DocumentationStory`): a reader who
/// copies them gets what the page shows.
@Suite("Documentation: runnable blocks", .onBlockingThreads)
struct DocumentationStoryTests {
    @Test(arguments: DocumentationStory.discovered)
    func storyRunsAsThePageShows(_ story: DocumentationStory) async throws {
        let binary = try #require(Paths.mishap, "the mishap binary was not found next to the test bundle")
        let run = try StoryRun(story, binary: binary)
        do {
            try await run.play()
        } catch {
            await run.stopServers()
            throw error
        }
        await run.stopServers()
    }

    /// The runner's own rules, on text alone.
    @Test func portsAndWildcards() {
        #expect(DocumentationStory.substitute("127.0.0.1:8080 18080 80801 --port 8080", [("8080", "40001")])
                == "127.0.0.1:40001 18080 80801 --port 40001")
        #expect(DocumentationStory.givePort("$ mishap start --scenarios x", "4") == "$ mishap start --port 4 --scenarios x")
        #expect(DocumentationStory.givePort("mishap start --port 9000", "4") == "mishap start --port 9000")
        #expect(DocumentationStory.givePort("mishap status", "4") == "mishap status")
        #expect(DocumentationStory.matches("mishap stopped (pid 42)", "mishap stopped (pid …)"))
        #expect(!DocumentationStory.matches("mishap stopped (pid 42) now", "mishap stopped (pid …)"))
        #expect(DocumentationStory.matches("a b c", "a … c") && !DocumentationStory.matches("a c", "a … c"))
    }
}

/// One story being run: its folder, its ports, and the servers it started.
final class StoryRun {
    let story: DocumentationStory
    let binary: String
    let folder: TemporaryFolder
    /// The page's ports and the free ports standing for them.
    let ports: [(page: String, real: String)]
    private var server: ChildProcess?

    init(_ story: DocumentationStory, binary: String) throws {
        self.story = story
        self.binary = binary
        folder = try TemporaryFolder()
        ports = try story.ports()
        let files = FileManager.default
        try files.copyItem(atPath: Paths.scenarios, toPath: folder.path + "/scenarios")
        try folder.makeFolder("docs")
        try files.copyItem(atPath: Paths.repository + "/docs/examples", toPath: folder.path + "/docs/examples")
        try folder.makeFolder("home")
        try folder.makeFolder(".bin")
        try folder.symlink(".bin/mishap", to: binary)
    }

    /// The port 8080 stands for.
    var defaultPort: String { ports.first { $0.page == "8080" }?.real ?? "8080" }

    /// The page's text as it runs here: its ports replaced, `mishap` given a port where it would take 8080.
    func prepared(_ text: String) -> String {
        DocumentationStory.substitute(text, ports.map { ($0.page, $0.real) }).components(separatedBy: "\n")
            .map { DocumentationStory.givePort($0, defaultPort) }.joined(separator: "\n")
    }

    /// Output as the page shows it: the page's ports back, no carriage returns.
    func shown(_ output: String) -> String {
        DocumentationStory.substitute(output.replacingOccurrences(of: "\r", with: ""), ports.map { ($0.real, $0.page) })
    }

    /// Runs `arguments` in the story's folder with its home and `PATH`, and none of the
    /// variables that would point `mishap` elsewhere.
    func run(_ arguments: [String], timeout: Duration = .seconds(90)) async throws -> Finished {
        let path = folder.path + "/.bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let unset = ["MISHAP_TLS_DIR", "XDG_DATA_HOME", "MISHAP_PID_FILE", "MISHAP_ADMIN_TOKEN"].flatMap { ["-u", $0] }
        return try await MishapTestSupport.run("/usr/bin/env", unset + ["HOME=" + folder.path + "/home", "PATH=" + path] + arguments,
                                               currentDirectory: folder.path, timeout: timeout)
    }

    /// Runs the story's blocks in order, after its server if it asks for one.
    func play() async throws {
        if story.blocks.contains(where: { $0.has("server") }) { try await startServer() }
        for block in story.blocks {
            switch block.kind {
            case "console": try await console(block)
            case "sh": try await shell(block)
            case "python": try await python(block)
            default: try await writeFile(block)
            }
        }
    }

    /// Serves the default scenarios on the port 8080 stands for.
    func startServer() async throws {
        let (server, _) = try await ServeTests.startServer(["serve", "--scenarios", folder.path + "/scenarios", "--port", defaultPort])
        self.server = server
    }

    /// Stops what the story started: the server, and every server holding a pid file in the folder.
    func stopServers() async {
        server?.kill()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names where name.hasSuffix(".pid") {
            _ = try? await MishapTestSupport.run(binary, ["stop", "--pid-file", folder.path + "/" + name], timeout: .seconds(30))
        }
    }

    /// A `console` block: each command's output (standard output, then standard error) is the
    /// page's, line by line.
    func console(_ block: DocumentationBlock) async throws {
        for step in DocumentationStory.steps(block.text) {
            let result = try await run(["bash", "-c", prepared(step.command)])
            var actual = shown(result.standardOutput + result.standardError)
            if !actual.isEmpty && !actual.hasSuffix("\n") { actual += "\n" }
            let actualLines = actual.isEmpty ? [] : Array(actual.dropLast().components(separatedBy: "\n"))
            var expected = step.output
            while expected.last == "" && actualLines.count < expected.count { expected.removeLast() }
            let same = actualLines.count == expected.count && zip(actualLines, expected).allSatisfy(DocumentationStory.matches)
            #expect(same, "\(block): $ \(step.command)\nthe page shows:\n\(expected.joined(separator: "\n"))\nit printed:\n\(actual)",
                    sourceLocation: Self.location)
        }
    }

    /// An `sh` block: run with bash -e, to exit 0.
    func shell(_ block: DocumentationBlock) async throws {
        let script = try folder.write(".block-\(block.line).sh", "set -e\n" + prepared(block.text) + "\n")
        let result = try await run(["bash", script])
        #expect(result.status == 0, "\(block) exits \(String(describing: result.status)):\n\(result.standardOutput)\n\(result.standardError)",
                sourceLocation: Self.location)
    }

    /// A `python` block: run with python3, after its prelude, calling every `test_*` function it defines.
    func python(_ block: DocumentationBlock) async throws {
        let prelude = try block.option("prelude").map { try #require(Self.preludes[$0], "no prelude \($0) for \(block)") } ?? ""
        let footer = "\nfor _name, _test in list(globals().items()):\n    if _name.startswith(\"test_\") and callable(_test):\n        _test()\n"
        let script = try folder.write(".block-\(block.line).py", prelude + prepared(block.text) + "\n" + footer)
        let result = try await run(["python3", script])
        #expect(result.status == 0, "\(block) exits \(String(describing: result.status)):\n\(result.standardOutput)\n\(result.standardError)",
                sourceLocation: Self.location)
    }

    /// A file the story writes (`file=PATH`); a scenario file is validated with its folder.
    func writeFile(_ block: DocumentationBlock) async throws {
        let path = try #require(block.option("file"))
        let full = try folder.write(path, block.text + "\n")
        guard block.kind == "scenario" else { return }
        let directory = (full as NSString).deletingLastPathComponent
        let result = try await run([binary, "validate", "--strict", directory])
        #expect(result.status == 0, "\(block): mishap validate --strict \(path)'s folder:\n\(result.standardOutput)\(result.standardError)",
                sourceLocation: Self.location)
    }

    /// What a page's Python assumes the reader has, by name. `my-client`: a client under test
    /// that retries a 503 after its `Retry-After`, as the page's `MyClient` must.
    static let preludes = [
        "my-client": """
            import json as _json, time as _time, urllib.error as _error, urllib.parse as _parse, urllib.request as _request

            class MyClient:
                def __init__(self, base_url):
                    self.base_url = base_url

                def is_available(self, name):
                    url = f"{self.base_url}/isUserNameAvailable?{_parse.urlencode({'userName': name})}"
                    for _ in range(5):
                        try:
                            with _request.urlopen(url) as answer:
                                return _json.loads(answer.read())["isAvailable"]
                        except _error.HTTPError as failure:
                            if failure.code != 503:
                                raise
                            _time.sleep(float(failure.headers.get("Retry-After", "1")))
                    raise RuntimeError("still failing")


            """,
    ]

    /// Where a failing block is reported: this file (the message names the page and line).
    static var location: SourceLocation { #_sourceLocation }
}
