import Foundation
import MishapTestSupport
import Testing

/// `mishap validate`, `mishap routes`, help and argument errors, run as a real process.
@Suite("mishap command line", .onBlockingThreads)
struct CLITests {
    static let userNameRules = SeedRules.userName
    static let loginRules = SeedRules.login

    /// ArgumentParser's exit code for usage errors (EX_USAGE).
    static let usageExitCode: Int32 = 64

    /// A folder with three problems in two files.
    static func badFolder() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        try folder.write("bad.yaml", """
            endpoint: GET /x
            rules:
              - name: a
                respond: { stauts: 500 }
              - name: b
                respond: { status: 99 }
            """)
        try folder.write("worse.yaml", """
            endpoint: GET /y
            rules: 5
            """)
        return folder
    }

    static func expectBadFolderDiagnostics(_ standardError: String, folder: String,
                                           sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = standardError.split(separator: "\n").map(String.init)
        let expected = [
            ("\(folder)/bad.yaml:4:16: ", "unknown key 'stauts' in a response (did you mean 'status'?)"),
            ("\(folder)/bad.yaml:6:24: ", "'status' must be an HTTP status code from 100 to 599"),
            ("\(folder)/worse.yaml:2:8: ", "'rules' must be a list"),
        ]
        for (location, message) in expected {
            #expect(lines.contains { $0.hasPrefix(location) && $0.contains(message) },
                    "no line '\(location)\(message)...' in:\n\(standardError)", sourceLocation: sourceLocation)
        }
        // Every diagnostic line is `path:line:column: message`.
        let located = lines.filter { $0.hasPrefix(folder + "/") }
        #expect(located.count == 3, "\(standardError)", sourceLocation: sourceLocation)
        for line in located {
            let fields = line.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
            #expect(fields.count == 4 && Int(fields[1]) != nil && Int(fields[2]) != nil && fields[3].hasPrefix(" "),
                    "not path:line:column: message: \(line)", sourceLocation: sourceLocation)
        }
    }

    // MARK: validate

    @Test("validate accepts the repository's scenarios folder")
    func validateDefaultScenarios() async throws {
        let result = try await runMishap(["validate", "scenarios"], currentDirectory: Paths.repository)
        #expect(result.status == 0, "\(result)")
        let rules = try DeclaredScenario.defaults.reduce(0) { $0 + $1.ruleNames.count }
        #expect(result.standardOutput == "scenarios: 5 file(s), 5 endpoint(s), \(rules) rule(s): valid\n")
        #expect(result.standardError.isEmpty, "\(result.standardError)")
    }

    @Test("validate reads ./scenarios when given no folder")
    func validateDefaultFolder() async throws {
        let result = try await runMishap(["validate"], currentDirectory: Paths.repository)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput.contains("valid"))
    }

    @Test("validate prints a rule that can never answer as a located warning and exits 0, or 1 with --strict")
    func validateWarnings() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(atPath: Paths.scenarios, toPath: folder.path + "/scenarios")
        let login = folder.path + "/scenarios/login.yaml"
        let text = try String(contentsOfFile: login, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        try (text + "  - name: locked\n    when: { body: { email: locked@x.com } }\n    respond: { status: 423 }\n")
            .write(toFile: login, atomically: true, encoding: .utf8)
        let result = try await runMishap(["validate", "scenarios"], currentDirectory: folder.path)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardError.hasPrefix("scenarios/login.yaml:\(lines):5: warning: rule 'locked' of POST /login can never answer: rule 'unknownUser' above it (scenarios/login.yaml:"),
                "\(result.standardError)")
        #expect(result.standardOutput.contains("valid with 1 warning(s)"), "\(result.standardOutput)")
        let strict = try await runMishap(["validate", "--strict", "scenarios"], currentDirectory: folder.path)
        #expect(strict.status == 1, "\(strict)")
        let clean = try await runMishap(["validate", "--strict"], currentDirectory: Paths.repository)
        #expect(clean.status == 0 && clean.standardError.isEmpty, "\(clean)")
    }

    @Test("validate reports every problem as path:line:column and exits 1")
    func validateBadFolder() async throws {
        let folder = try Self.badFolder()
        let result = try await runMishap(["validate", folder.path])
        #expect(result.status == 1, "\(result)")
        #expect(!result.standardOutput.contains("valid"), "\(result.standardOutput)")
        Self.expectBadFolderDiagnostics(result.standardError, folder: folder.path)
        #expect(result.standardError.hasSuffix("\(folder.path): 3 problem(s)\n"), "\(result.standardError)")
    }

    @Test("validate of a folder that does not exist exits 1")
    func validateMissingFolder() async throws {
        let folder = try TemporaryFolder()
        let missing = folder.path + "/missing"
        let result = try await runMishap(["validate", missing])
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.contains("\(missing):1:1: scenarios folder not found"), "\(result.standardError)")
    }

    // MARK: routes

    @Test("routes lists every endpoint and its rules in order")
    func routesDefaultScenarios() async throws {
        let result = try await runMishap(["routes", "scenarios"], currentDirectory: Paths.repository)
        #expect(result.status == 0, "\(result)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let endpoints = lines.filter { !$0.hasPrefix(" ") }
        let declared = try DeclaredScenario.defaults
        #expect(endpoints == zip(DeclaredScenario.defaultFiles, declared).map { file, scenario in
            "\(file.1)  (scenarios/\(file.0):\(scenario.endpointLine))"
        }, "\(result.standardOutput)")
        // Rules follow their endpoint, indented, in declaration order.
        var rulesByEndpoint: [[String]] = []
        for line in lines {
            if !line.hasPrefix(" ") { rulesByEndpoint.append([]); continue }
            let name = line.split(separator: " ").first.map(String.init) ?? ""
            rulesByEndpoint[rulesByEndpoint.count - 1].append(name)
        }
        #expect(rulesByEndpoint == declared.map(\.ruleNames))
        try #require(rulesByEndpoint.count == DeclaredScenario.defaultFiles.count)
        #expect(rulesByEndpoint[0].filter(Self.userNameRules.contains) == Self.userNameRules)
        #expect(rulesByEndpoint[1].filter(Self.loginRules.contains) == Self.loginRules)
        #expect(lines.contains { $0.hasPrefix("  tooShort ") && $0.hasSuffix("-> 400") })
        // Each rule's trigger in brief, and its aliases.
        func line(_ name: String, in endpoint: Int) -> String {
            let start = lines.firstIndex { $0 == endpoints[endpoint] } ?? 0
            let squeezed = lines[start...].first { $0.hasPrefix("  \(name) ") } ?? ""
            return squeezed.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        }
        #expect(line("serverError", in: 0) == "serverError query.userName = servererror -> 500")
        #expect(line("tooShort", in: 0) == "tooShort query.userName length <= 3 -> 400")
        #expect(line("maintenanceForever", in: 0) == "maintenanceForever (maintenance!) query.userName = maintenance! -> 500")
        #expect(line("illegalName", in: 0) == "illegalName (admin, superuser) query.userName in [admin, superuser] -> 400")
        #expect(line("flaky", in: 0) == "flaky query.userName = flaky, chance 0.5 -> 500")
        #expect(line("available", in: 0) == "available (always) -> 200")
        #expect(line("serverError", in: 1) == "serverError body.email prefix servererror@ -> 500")
        #expect(line("invalidEmail", in: 1) == "invalidEmail body.email not (contains @) -> 400")
        #expect(lines.contains { $0.hasPrefix("  maintenance ") && $0.hasSuffix("cycle 500, 500, pass") })
        #expect(lines.contains { $0.hasPrefix("  maintenance ") && $0.hasSuffix("cycle 500, 500, 200") })
    }

    @Test("routes of a bad folder exits 1 with located problems")
    func routesBadFolder() async throws {
        let folder = try Self.badFolder()
        let result = try await runMishap(["routes", folder.path])
        #expect(result.status == 1, "\(result)")
        #expect(result.standardOutput.isEmpty, "\(result.standardOutput)")
        Self.expectBadFolderDiagnostics(result.standardError, folder: folder.path)
    }

    // MARK: the folder, as an argument or with --scenarios

    @Test("validate and routes take the folder as an argument or with --scenarios, as serve does", arguments: ["validate", "routes"])
    func folderEitherWay(command: String) async throws {
        let positional = try await runMishap([command, "scenarios"], currentDirectory: Paths.repository)
        #expect(positional.status == 0, "\(positional)")
        #expect(!positional.standardOutput.isEmpty)
        // Both at once is fine when they agree.
        for arguments in [[command, "--scenarios", "scenarios"], [command, "--scenarios=scenarios"],
                          [command, "scenarios", "--scenarios", "scenarios"], [command, "--scenarios", "scenarios", "scenarios"]] {
            let result = try await runMishap(arguments, currentDirectory: Paths.repository)
            #expect(result.status == 0, "\(arguments): \(result)")
            #expect(result.standardOutput == positional.standardOutput, "\(arguments): \(result.standardOutput)")
            #expect(result.standardError.isEmpty, "\(arguments): \(result.standardError)")
        }

        // A bad folder named with --scenarios is reported as when named as the argument.
        let folder = try Self.badFolder()
        let bad = try await runMishap([command, "--scenarios", folder.path])
        #expect(bad.status == 1, "\(bad)")
        Self.expectBadFolderDiagnostics(bad.standardError, folder: folder.path)
    }

    // MARK: help and argument errors

    @Test("--help lists the subcommands")
    func help() async throws {
        let result = try await runMishap(["--help"])
        #expect(result.status == 0, "\(result)")
        for name in ["serve", "validate", "routes"] {
            #expect(result.standardOutput.contains("  \(name)"), "no \(name) in:\n\(result.standardOutput)")
        }
        #expect(result.standardOutput.contains("USAGE"))
    }

    @Test("serve --help documents its options")
    func serveHelp() async throws {
        let result = try await runMishap(["serve", "--help"])
        #expect(result.status == 0, "\(result)")
        for option in ["--scenarios", "--host", "--port", "--threads", "--max-body", "--log-level"] {
            #expect(result.standardOutput.contains(option), "no \(option) in:\n\(result.standardOutput)")
        }
    }

    /// `serve`'s arguments are parsed by `Serve` alone when they are good (it is cheaper);
    /// whatever it refuses is parsed again from the root, so help and errors name the command
    /// as `mishap serve`, the same with or without the subcommand's name.
    @Test("Help and errors of serve read as from the root, named or by default")
    func serveParsedDirectly() async throws {
        let help = try await runMishap(["serve", "--help"])
        let helpCommand = try await runMishap(["help", "serve"])
        #expect(help.status == 0 && helpCommand.status == 0, "\(help) \(helpCommand)")
        #expect(help.standardOutput == helpCommand.standardOutput)
        #expect(help.standardOutput.contains("USAGE: mishap serve"), "\(help.standardOutput)")
        let named = try await runMishap(["serve", "--port", "abc"])
        let unnamed = try await runMishap(["--port", "abc"])
        #expect(named.status == Self.usageExitCode && unnamed.status == Self.usageExitCode, "\(named) \(unnamed)")
        #expect(named.standardError.contains("Usage: mishap serve"), "\(named.standardError)")
        #expect(named.standardError == unnamed.standardError)
        // Completion scripts are the root's, for every subcommand.
        let completion = try await runMishap(["serve", "--generate-completion-script", "bash"])
        let rootCompletion = try await runMishap(["--generate-completion-script", "bash"])
        #expect(completion.status == 0 && completion.standardOutput == rootCompletion.standardOutput, "\(completion)")
        #expect(completion.standardOutput.contains("_mishap"), "\(completion.standardOutput.prefix(200))")
    }

    @Test("--version prints the version")
    func version() async throws {
        let result = try await runMishap(["--version"])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == "0.1.0\n")
    }

    @Test("Bad flags exit 64 with usage on standard error", arguments: [
        (["serve", "--port", "abc"], "abc"),
        (["serve", "--port", "70000"], "--port must be from 0 to 65535"),
        (["--port=-1"], "--port must be from 0 to 65535"),
        (["--port", "-1"], "--port"),
        (["--nonsense"], "--nonsense"),
        (["serve", "--threads", "0"], "--threads must be at least 1"),
        (["serve", "--max-body=-5"], "--max-body must not be negative"),
        (["serve", "--log-level", "loud"], "loud"),
        (["validate", "a", "b"], "b"),
        (["validate", "a", "--scenarios", "b"], "the scenarios folder is given twice, as 'a' and with --scenarios 'b'"),
        (["routes", "--scenarios=b", "a"], "the scenarios folder is given twice, as 'a' and with --scenarios 'b'"),
        (["serve", "--rule-header", "not a header"], "--rule-header must be a header name"),
        (["serve", "--grace", "1e300"], "--grace must be from 0 to 86400 seconds"),
        (["serve", "--grace", "nan"], "--grace must be from 0 to 86400 seconds"),
        (["serve", "--max-header-size", "10"], "--max-header-size must be from 1024 to 1048576 bytes"),
        (["serve", "--journal-size=-1"], "--journal-size must not be negative"),
        (["serve", "--watch", "sometimes"], "sometimes"),
        (["serve", "--log-format", "xml"], "xml"),
        (["start", "--timeout", "1e300"], "--timeout must be from 0.1 to 86400 seconds"),
        (["stop", "--timeout", "1e300"], "--timeout must be from 0 to 86400 seconds"),
        (["serve", "--connection-limit", "0"], "--connection-limit must be from 1 to 1000000"),
        (["serve", "--connection-timeout=-1"], "--connection-timeout must be from 0 to 86400 seconds"),
        (["serve", "--connection-timeout", "1e9"], "1e9"),
        (["serve", "--head-timeout=-1"], "--head-timeout must be from 0 to 86400 seconds"),
        (["serve", "--max-sessions", "0"], "--max-sessions must be from 1 to 10000000"),
        (["serve", "--admin-token", ""], "must be printable ASCII with no spaces, and not empty"),
        (["serve", "--admin-token", "two words"], "must be printable ASCII with no spaces, and not empty"),
        (["status", "--url", "http://127.0.0.1:1", "--admin-token", "a\r\nX-Injected: 1"], "--admin-token must be printable ASCII"),
        (["state", "--url", "http://127.0.0.1:1", "--admin-token", "two words"], "--admin-token must be printable ASCII"),
        (["force", "POST /login", "ok", "--url", "http://127.0.0.1:1", "--admin-token", "a\r\nX-Injected: 1"], "--admin-token must be printable ASCII"),
        (["routes", "--url", "http://127.0.0.1:1", "--admin-token", ""], "--admin-token must be printable ASCII"),
        (["serve", "--upstream", "ftp://example.com"], "--upstream must start with http:// or https://"),
        (["serve", "--upstream-timeout", "0"], "--upstream-timeout must be from"),
        (["serve", "--upstream-ca", "/nonexistent.pem"], "--upstream-ca: cannot read"),
        (["serve", "--upstream", "http://a", "--upstream-ca", "/nonexistent.pem"], "--upstream-ca: cannot read"),
        (["record", "--out", "/tmp/mishap-never"], "--upstream is required"),
        (["record", "--upstream", "http://127.0.0.1:1"], "--out"),
        (["record", "--upstream", "ftp://a", "--out", "/tmp/mishap-never"], "--upstream must start with http:// or https://"),
        (["record", "--upstream", "http://a", "--out", "/tmp/mishap-never", "--port", "70000"], "--port must be from 0 to 65535"),
        (["record", "--upstream", "http://a", "--out", "/tmp/mishap-never", "--keep-header", "Date"], "'Date' is written by the server"),
        (["record", "--upstream", "http://a", "--out", "/tmp/mishap-never", "--keep-header", "a b"], "--keep-header 'a b' is not a header name"),
        (["record", "--upstream", "http://a", "--out", "/tmp/mishap-never", "--upstream-timeout", "0"], "--upstream-timeout must be from"),
    ])
    func badFlags(arguments: [String], mentioned: String) async throws {
        let result = try await runMishap(arguments, timeout: .seconds(20))
        #expect(result.status == Self.usageExitCode, "\(arguments): \(result)")
        #expect(result.standardError.contains("Usage:"), "\(arguments): \(result.standardError)")
        #expect(result.standardError.contains("Error:"), "\(arguments): \(result.standardError)")
        #expect(result.standardError.contains(mentioned), "\(arguments): \(result.standardError)")
        #expect(!result.standardOutput.contains("listening"), "\(arguments): \(result.standardOutput)")
    }
}
