import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// docs/upstream.md's recording, run as the page tells it: `mishap record` in front of the page's
/// stand-in backend, the page's requests, Ctrl-C, the summary the page shows, the file it shows
/// written exactly, the recording validated and served without the backend, and the page's
/// outage added above the recorded rules.
@Suite("Documentation: recording a backend", .onBlockingThreads)
struct RecordingExampleTests {
    @Test("record, the requests, Ctrl-C: the summary, the file and the replay are the page's")
    func recordingAsThePageTellsIt() async throws {
        let pages = try DocumentationPages.load()
        let backendFile = try #require(pages.blocks.first { $0.file == "docs/upstream.md" && $0.option("file") == "backend/orders.yaml" })
        let session = try ReadmeExampleTests.block("record-session").components(separatedBy: "\n")
        let recordedFile = try ReadmeExampleTests.block("recorded-file")
        let outage = try ReadmeExampleTests.block("recorded-outage")

        let folder = try TemporaryFolder()
        try folder.write("backend/orders.yaml", backendFile.text + "\n")
        let (backend, backendPort) = try await ServeTests.startServer(["serve", "--scenarios", folder.path + "/backend", "--port", "0"])
        defer { backend.kill() }

        // The first line starts the recorder, in the foreground (here: in the background, on a free port).
        let recordLine = try #require(session.first { $0.hasPrefix("mishap record ") }).components(separatedBy: " #")[0]
        let arguments = DocumentationStory.substitute(recordLine, [("9000", String(backendPort))])
            .split(separator: " ").dropFirst().map(String.init)
        let recorder = try ChildProcess.mishap(arguments + ["--port", "0"], currentDirectory: folder.path)
        defer { recorder.kill() }
        let port = try #require(listeningPort(await recorder.firstOutputLine(timeout: .seconds(30)) ?? ""), "\(recorder.standardError)")

        let requests = session.filter { $0.hasPrefix("curl ") }
        #expect(requests.count == 2, "\(session)")
        var answers: [String] = []
        for request in requests {
            let result = try await run("/bin/bash", ["-c", request.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(port)")],
                                       currentDirectory: folder.path)
            #expect(result.status == 0 && !result.standardOutput.isEmpty, "\(request): \(result)")
            answers.append(result.standardOutput)
        }
        recorder.signal(SIGINT)
        #expect(await recorder.waitForExit(timeout: .seconds(30)), "the recorder still runs after SIGINT")
        let summary = try #require(session.first { $0.hasPrefix("# Ctrl-C: ") }).dropFirst("# Ctrl-C: ".count)
        #expect(recorder.standardOutput.hasSuffix(summary + "\n"), "the page shows '\(summary)': \(recorder.standardOutput)")

        let written = try String(contentsOfFile: folder.path + "/recorded/get_v1-orders.yaml", encoding: .utf8)
        #expect(DocumentationStory.substitute(written, [(String(backendPort), "9000")]) == recordedFile + "\n",
                "the page shows:\n\(recordedFile)\nmishap record wrote:\n\(written)")
        #expect(session.contains("mishap validate recorded"))
        let validated = try await runMishap(["validate", "recorded"], currentDirectory: folder.path)
        #expect(validated.status == 0, "\(validated)")

        // Served without the backend: the same answers.
        backend.kill()
        #expect(session.contains { $0.hasPrefix("mishap serve --scenarios recorded") })
        let (replay, replayPort) = try await ServeTests.startServer(["serve", "--scenarios", folder.path + "/recorded", "--port", "0"])
        defer { replay.kill() }
        for (request, answer) in zip(requests, answers) {
            let result = try await run("/bin/bash", ["-c", request.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(replayPort)")],
                                       currentDirectory: folder.path)
            #expect(result.standardOutput == answer, "\(request): \(result.standardOutput) where the backend answered \(answer)")
        }

        // The page's outage, above the recorded rules.
        try outage.write(toFile: folder.path + "/recorded/outage.yaml", atomically: true, encoding: .utf8)
        let strict = try await runMishap(["validate", "--strict", "recorded"], currentDirectory: folder.path)
        #expect(strict.status == 0, "\(strict)")
        let reload = try await ServeTests.curl("http://127.0.0.1:\(replayPort)/__mishap/reload", extra: ["-X", "POST"])
        #expect(reload.status == 200, "\(reload)")
        let down = try await ServeTests.curl("http://127.0.0.1:\(replayPort)/v1/orders", extra: ["-H", "X-Test: outage"])
        #expect(down.status == 503 && down.body == #"{"error":true}"#, "\(down)")
    }
}
