import Foundation
import MishapTestSupport
import Testing

/// The README's examples, run as written: a reader who copies them gets what the README shows.
/// Each example is found by the HTML comment before its code block (`<!-- worked-example:
/// before -->` and so on); its `$ ` lines are run with bash against a real server (the
/// README's `http://127.0.0.1:8080` replaced by the test server's URL, `mishap` by the built
/// binary), and what they print must be the lines that follow them, exactly.
@Suite("README examples", .onBlockingThreads)
struct ReadmeExampleTests {
    /// The README's text.
    static var readme: String {
        get throws { try String(contentsOfFile: Paths.repository + "/README.md", encoding: .utf8) }
    }

    /// The code block after `<!-- NAME -->`, without its fences.
    static func block(_ name: String, in text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let marker = try #require(text.range(of: "<!-- \(name) -->"), "no <!-- \(name) --> in the README", sourceLocation: sourceLocation)
        let fence = try #require(text.range(of: "```", range: marker.upperBound..<text.endIndex), sourceLocation: sourceLocation)
        let bodyStart = try #require(text.range(of: "\n", range: fence.upperBound..<text.endIndex), sourceLocation: sourceLocation)
        let end = try #require(text.range(of: "\n```", range: bodyStart.lowerBound..<text.endIndex), sourceLocation: sourceLocation)
        return String(text[bodyStart.upperBound..<end.lowerBound])
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
    /// standard error) to be the README's.
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

    @Test("mishap validate reports the README's example file as the README shows")
    func validateExample() async throws {
        let block = try Self.block("validate-example", in: Self.readme)
        try await Self.expectSession(block, in: Paths.repository)
    }

    @Test("Adding a failure: the worked example, edit included, answers as the README shows")
    func workedExample() async throws {
        let text = try Self.readme
        let before = try Self.block("worked-example: before", in: text)
        let rule = try Self.block("worked-example: rule", in: text)
        let after = try Self.block("worked-example: after", in: text)

        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(atPath: Paths.scenarios, toPath: folder.path + "/scenarios")
        let (server, port) = try await ServeTests.startServer(["serve", "--scenarios", folder.path + "/scenarios", "--port", "0"])
        defer { server.kill() }
        let url = "http://127.0.0.1:\(port)"
        try await Self.expectSession(before, url: url, in: folder.path)

        // The edit the README asks for: the rule, just above the rule named `success`.
        let login = folder.path + "/scenarios/login.yaml"
        let original = try String(contentsOfFile: login, encoding: .utf8)
        let anchor = try #require(original.range(of: "\n  - name: success\n"), "login.yaml has no rule named success")
        let edited = original.replacingCharacters(in: anchor, with: "\n" + rule + "\n  - name: success\n")
        try edited.write(toFile: login, atomically: true, encoding: .utf8)
        let reloaded = await eventually(within: .seconds(15)) {
            server.standardError.contains("reloaded") || server.standardError.contains("problem")
        }
        #expect(reloaded, "no reload logged: \(server.standardError)")
        try await Self.expectSession(after, url: url, in: folder.path)
    }

    @Test("The README's proxy rules in front of a second server: the payment reaches it, the client gets a reset")
    func proxyRules() async throws {
        let block = try Self.block("proxy-rules", in: Self.readme)
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
