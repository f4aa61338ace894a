import Foundation
import MishapTestSupport
import Testing

/// The examples of README.md and docs/ that need a test of their own, run as written: a reader
/// who copies them gets what the page shows. Each is found by the marker before its code block
/// (`<!-- check: example worked-example-before -->` and so on, `DocumentationPages`); its `$ `
/// lines are run with bash against a real server (the page's `http://127.0.0.1:8080` replaced by
/// the test server's URL, `mishap` by the built binary), and what they print must be the lines
/// that follow them, exactly.
@Suite("README examples", .onBlockingThreads)
struct ReadmeExampleTests {
    /// The code block marked `<!-- check: example NAME -->` in README.md or docs/*.md, without its fences.
    static func block(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let blocks = try DocumentationPages.load().blocks.filter { $0.marker == ["example", name] }
        try #require(blocks.count == 1, "\(blocks.count) blocks marked <!-- check: example \(name) -->", sourceLocation: sourceLocation)
        return blocks[0].text
    }

    /// A console block's commands (`$ ` lines) with the output shown after each.
    static func session(_ block: String) -> [(command: String, output: String)] {
        var steps: [(command: String, output: String)] = []
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("$ ") {
                steps.append((String(line.dropFirst(2)), ""))
            } else if !steps.isEmpty {
                steps[steps.count - 1].output += line + "\n"
            }
        }
        return steps
    }

    /// Runs each command with bash in `folder` and expects its output (standard output, then
    /// standard error) to be the page's.
    static func expectSession(_ block: String, url: String? = nil, in folder: String,
                              sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let binary = try #require(Paths.mishap, sourceLocation: sourceLocation)
        let steps = session(block)
        #expect(!steps.isEmpty, "no commands in \(block)", sourceLocation: sourceLocation)
        for step in steps {
            var command = step.command
            if let url { command = command.replacingOccurrences(of: "http://127.0.0.1:8080", with: url) }
            if command.hasPrefix("mishap ") { command = "'\(binary)'" + command.dropFirst("mishap".count) }
            let result = try await run("/bin/bash", ["-c", command], currentDirectory: folder, timeout: .seconds(30))
            #expect(result.standardOutput + result.standardError == step.output,
                    "\(step.command)", sourceLocation: sourceLocation)
        }
    }

    @Test("mishap validate reports the example file as docs/scenarios.md shows")
    func validateExample() async throws {
        let block = try Self.block("validate-example")
        try await Self.expectSession(block, in: Paths.repository)
    }

    @Test("Adding a failure: the worked example, a file of its own in a copy of the scenarios, answers as the page shows")
    func workedExample() async throws {
        let before = try Self.block("worked-example-before")
        let rule = try Self.block("worked-example-rule")
        let after = try Self.block("worked-example-after")

        // A copy of the default scenarios, as the page's `cp -R scenarios my-scenarios` makes.
        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(atPath: Paths.scenarios, toPath: folder.path + "/my-scenarios")
        let (server, port) = try await ServeTests.startServer(["serve", "--scenarios", folder.path + "/my-scenarios", "--port", "0"])
        defer { server.kill() }
        let url = "http://127.0.0.1:\(port)"
        try await Self.expectSession(before, url: url, in: folder.path)

        // The file the page asks for, beside the shipped ones, which stay as they are.
        try rule.write(toFile: folder.path + "/my-scenarios/locked.yaml", atomically: true, encoding: .utf8)
        let reloaded = await eventually(within: .seconds(15)) {
            server.standardError.contains("reloaded") || server.standardError.contains("problem")
        }
        #expect(reloaded, "no reload logged: \(server.standardError)")
        try await Self.expectSession(after, url: url, in: folder.path)
    }

    @Test("The proxy rules of docs/upstream.md in front of a second server: the payment reaches it, the client gets a reset")
    func proxyRules() async throws {
        let block = try Self.block("proxy-rules")
        let folder = try TemporaryFolder()
        for name in ["front", "back"] {
            try FileManager.default.createDirectory(atPath: folder.path + "/" + name, withIntermediateDirectories: true)
        }
        try block.write(toFile: folder.path + "/front/payments.yaml", atomically: true, encoding: .utf8)
        try "endpoint: POST /v1/payments\nrules:\n  - { name: taken, respond: { status: 201, json: { paid: true } } }\n"
            .write(toFile: folder.path + "/back/payments.yaml", atomically: true, encoding: .utf8)
        let (back, backPort) = try await ServeTests.startServer(["serve", "--scenarios", folder.path + "/back", "--port", "0"])
        defer { back.kill() }
        let (front, port) = try await ServeTests.startServer(
            ["serve", "--scenarios", folder.path + "/front", "--port", "0", "--upstream", "http://127.0.0.1:\(backPort)"])
        defer { front.kill() }
        let payments = "http://127.0.0.1:\(port)/v1/payments"

        let lost = try await run(ServeTests.curl, ["-s", "--max-time", "10", "-X", "POST", "-H", "X-Test: lost-answer", "--data", "{}", payments],
                                 timeout: .seconds(20))
        #expect(lost.status == 56 && lost.standardOutput.isEmpty, "curl: \(lost)")
        let journal = try await ServeTests.curl("http://127.0.0.1:\(backPort)/__mishap/requests")
        #expect(journal.body.components(separatedBy: "\"path\":\"/v1/payments\"").count == 2, "the backend's journal: \(journal.body)")

        let hint = try await run(ServeTests.curl, ["-s", "-i", "--max-time", "10", "-X", "POST", "-H", "X-Test: hint", payments], timeout: .seconds(20))
        #expect(hint.standardOutput.hasPrefix("HTTP/1.1 201") && hint.standardOutput.contains("Retry-After: 2\r\n"), "\(hint)")
        #expect(hint.standardOutput.hasSuffix(#"{"paid":true}"#), "\(hint)")
        let plain = try await ServeTests.curl(payments, extra: ["-X", "POST"])
        #expect(plain.status == 201 && plain.body == #"{"paid":true}"#, "\(plain)")
    }
}
