import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What `mishap start` hands the server it starts: every option of `serve`, each with the value
/// `start` was given (or `serve`'s default), read back from the server's command line in
/// `/proc/PID/cmdline` and seen in what the server does. Part of the daemon suite, so these run
/// one at a time like its other tests.
extension DaemonTests {
    /// An option or flag of `serve`, as ArgumentParser describes it.
    struct ServeOption {
        /// The long name, without the dashes.
        let name: String
        /// The default ArgumentParser shows; nil for a flag and for an option that may be unset.
        let defaultValue: String?
    }

    /// Every option and flag of `serve` (hidden ones included; help and version left out), from
    /// `mishap serve --experimental-dump-help`, ArgumentParser's own description of the command:
    /// an option added to `serve` is in it without anything else to change.
    static func serveOptions(sourceLocation: SourceLocation = #_sourceLocation) async throws -> [ServeOption] {
        let result = try await runMishap(["serve", "--experimental-dump-help"], sourceLocation: sourceLocation)
        try #require(result.status == 0, "\(result)", sourceLocation: sourceLocation)
        let tool = try #require(object(result.standardOutput), "not a JSON object: \(result.standardOutput)",
                                sourceLocation: sourceLocation)
        let command = try #require(tool["command"] as? [String: Any], "\(tool)", sourceLocation: sourceLocation)
        try #require(command["commandName"] as? String == "serve", "\(command)", sourceLocation: sourceLocation)
        let arguments = try #require(command["arguments"] as? [[String: Any]], "\(command)", sourceLocation: sourceLocation)
        var options: [ServeOption] = []
        for argument in arguments {
            // A positional argument would have to be handed over too, and has no name to look for.
            #expect(argument["kind"] as? String != "positional", "serve takes a positional argument: \(argument)",
                    sourceLocation: sourceLocation)
            let names = (argument["names"] as? [[String: Any]] ?? [])
                .filter { $0["kind"] as? String == "long" }.compactMap { $0["name"] as? String }
            guard let name = names.first else {
                Issue.record("an argument of serve without a long name: \(argument)", sourceLocation: sourceLocation)
                continue
            }
            if name == "help" || name == "version" { continue }
            options.append(ServeOption(name: name, defaultValue: argument["defaultValue"] as? String))
        }
        // The description was understood: serve has about twenty options.
        try #require(options.count >= 20, "\(options.map(\.name))", sourceLocation: sourceLocation)
        return options
    }

    /// The options on the command line of a running `mishap serve` (`--name=value` or `--name`),
    /// by name; a flag's value is nil.
    static func serveCommandLine(of pid: pid_t, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: String?] {
        let data = try #require(FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), "no command line for pid \(pid)",
                                sourceLocation: sourceLocation)
        var words = data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        if words.last == "" { words.removeLast() }
        try #require(words.count >= 2 && words[1] == "serve", "not mishap serve: \(words)", sourceLocation: sourceLocation)
        var options: [String: String?] = [:]
        for word in words.dropFirst(2) {
            try #require(word.hasPrefix("--"), "not an option: \(word) in \(words)", sourceLocation: sourceLocation)
            let option = word.dropFirst(2)
            let name: String, value: String?
            if let equals = option.firstIndex(of: "=") {
                name = String(option[..<equals])
                value = String(option[option.index(after: equals)...])
            } else {
                name = String(option)
                value = nil
            }
            #expect(options.index(forKey: name) == nil, "--\(name) given twice: \(words)", sourceLocation: sourceLocation)
            options[name] = .some(value)
        }
        return options
    }

    @Test("start hands the server every option of serve with the value it was given; the server uses them")
    func startHandsOverEveryServeOption() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let scenarios = folder.path + "/my scenarios"
        try FileManager.default.copyItem(atPath: Paths.scenarios, toPath: scenarios)
        let pidFile = folder.path + "/my.pid", logFile = folder.path + "/my.log"
        let reaper = Reaper(pidFiles: [pidFile])
        defer { reaper.killAll() }

        // A value for every option of serve, none of them its default (nil for a flag). An option
        // added to serve fails this test until it has a value here.
        let given: [(name: String, value: String?)] = [
            ("scenarios", scenarios), ("host", "127.0.0.2"), ("port", "0"), ("admin-port", "0"), ("port-file", "port"), ("threads", "3"),
            ("event-loop", "poll"),
            ("max-body", "12345"), ("max-header-size", "4096"), ("connection-limit", "100"), ("connection-timeout", "7"),
            ("head-timeout", "5"),
            ("log-level", "debug"), ("log-format", "json"), ("seed", "42"), ("session-header", "X-Test-Session"),
            ("rule-header", "X-Test-Rule"), ("journal-size", "5"), ("max-sessions", "77"), ("session-prefix", "/__s"),
            ("max-runtime-rules", "50"), ("max-runtime-rules-per-session", "5"), ("max-runtime-rule-bytes", "123456"), ("no-admin", nil),
            ("admin-token", "-a-token-that-starts-like-an-option"), ("cors", "http://app.test:3000"), ("watch", "poll"), ("watch-settle", "1500ms"), ("grace", "2.5"),
            ("pid-file", "my.pid"),
            ("tls-port", "0"), ("tls-dir", folder.path + "/tls"), ("tls-name", "mishap.test"),
            ("tls-cert", folder.path + "/tls/ca.pem"), ("tls-key", folder.path + "/tls/ca-key.pem"),
            ("tls-catalogue-port", "20000"), ("no-tls-catalogue", nil),
            ("upstream", "http://127.0.0.1:9/api"), ("upstream-timeout", "7.5"), ("upstream-ca", folder.path + "/tls/ca.pem"),
            ("upstream-memory", "1048576"), ("admin-host", "mishap.test"), ("admin-origin", "http://app.test:3000"),
            ("network", "wifi"), ("openapi", folder.path + "/api.yaml"),
        ]
        try folder.write("api.yaml", """
            openapi: 3.0.3
            paths:
              /isUserNameAvailable:
                get:
                  parameters: [{ name: userName, in: query, required: true, schema: { type: string } }]
            """)
        let authority = try await runMishap(["tls", "init", "--dir", folder.path + "/tls"])
        #expect(authority.status == 0, "\(authority)")
        let options = try await Self.serveOptions()
        // --ready-fd (hidden) is start's own business: the descriptor it reads the URL from.
        #expect(Set(given.map(\.name)).union(["ready-fd"]) == Set(options.map(\.name)),
                "the options of serve are not those this test gives start: \(options.map(\.name))")
        for (name, value) in given {
            let option = options.first { $0.name == name }
            #expect(option == nil || value == nil || option?.defaultValue != value, "--\(name) \(value ?? "") is its default")
        }

        // As a person would type them; a value starting with '-' needs the --name=value form.
        var arguments = ["start", "--log-file", "my.log"]
        for (name, value) in given {
            guard let value else { arguments.append("--\(name)"); continue }
            arguments += value.hasPrefix("-") ? ["--\(name)=\(value)"] : ["--\(name)", value]
        }
        let start = try await runMishap(arguments, currentDirectory: folder.path, timeout: .seconds(15))
        #expect(start.status == 0, "\(start)")
        let (url, pid) = try #require(Self.started(start.standardOutput), "\(start)")
        reaper.pids.insert(pid)
        #expect(start.standardOutput.contains("pid file \(pidFile), logs in \(logFile)"), "\(start.standardOutput)")

        // Handed over, each with its value: serve parses the same text as start did into the same
        // values, and it started with them. The pid file is made absolute; --ready-fd is start's.
        var expected = Dictionary(uniqueKeysWithValues: given.map { ($0.name, $0.value) })
        expected["pid-file"] = .some(pidFile)
        expected["ready-fd"] = .some("3")
        let forwarded = try Self.serveCommandLine(of: pid)
        for option in options {
            #expect(forwarded.index(forKey: option.name) != nil, "start does not hand --\(option.name) to the server: \(forwarded)")
            #expect(forwarded[option.name] == expected[option.name],
                    "--\(option.name): given \(String(describing: expected[option.name])), handed over \(String(describing: forwarded[option.name]))")
        }
        #expect(Set(forwarded.keys) == Set(options.map(\.name)), "\(forwarded)")

        // And used: the address, the port file (relative to where start ran), the rule header,
        // the admin API off, JSON logs.
        #expect(url.hasPrefix("http://127.0.0.2:"), "\(url)")
        let port = try #require(UInt16(url.dropFirst("http://127.0.0.2:".count)), "\(url)")
        #expect(Self.read(folder.path + "/port") == "\(port)\n")
        #expect(Self.read(pidFile) == "\(pid)\n\(url)\n")
        let path = "/isUserNameAvailable?userName=zaphod"
        let picked = Self.fetch(port, path, host: "127.0.0.2", headers: ["X-Test-Rule: taken"])
        #expect(picked?.body == #"{"isAvailable":false,"userName":"zaphod"}"#, "\(String(describing: picked))")
        let ignored = Self.fetch(port, path, host: "127.0.0.2", headers: ["X-Mishap-Rule: taken"])
        #expect(ignored?.body == #"{"isAvailable":true,"userName":"zaphod"}"#, "\(String(describing: ignored))")
        // The API description checks the requests it describes.
        let refused = Self.fetch(port, "/isUserNameAvailable", host: "127.0.0.2")
        #expect(refused?.status == 400 && refused?.body.contains(#""problems":["query userName: required"]"#) == true, "\(String(describing: refused))")
        // The admin API is off, so the path is no rule's and goes to the upstream, which is down.
        #expect(Self.fetch(port, "/__mishap/health", host: "127.0.0.2")?.status == 502)
        let status = try await runMishap(["status", "--pid-file", pidFile])
        #expect(status.standardOutput == "mishap is running at \(url) (pid \(pid))\n", "\(status)")

        let stop = try await runMishap(["stop", "--pid-file", pidFile])
        #expect(stop.status == 0, "\(stop)")
        // Every line is JSON, the listening line (standard output, in the same file) included.
        let lines = (Self.read(logFile) ?? "").split(separator: "\n").map(String.init)
        #expect(lines.contains { Self.object($0)?["url"] as? String == url }, "\(lines)")
        #expect(!lines.isEmpty && lines.allSatisfy { Self.object($0) != nil }, "\(lines)")
        #expect(lines.contains { $0.contains(#""rule":"taken""#) }, "\(lines)")
    }

    @Test("start hands the server serve's default for every option it is not given; an admin token from the environment stays off the command line")
    func startHandsOverServeDefaults() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        try FileManager.default.copyItem(atPath: Paths.scenarios, toPath: folder.path + "/scenarios")
        let pidFile = folder.path + "/mishap.pid"
        let reaper = Reaper(pidFiles: [pidFile])
        defer { reaper.killAll() }
        let token = "a-token-from-the-environment"

        let start = try await runMishap(["start", "--port", "0"], currentDirectory: folder.path,
                                        environment: ["MISHAP_ADMIN_TOKEN": token], timeout: .seconds(15))
        #expect(start.status == 0, "\(start)")
        let (url, pid) = try #require(Self.started(start.standardOutput), "\(start)")
        reaper.pids.insert(pid)
        let port = try #require(Self.port(of: url), "\(url)")

        let forwarded = try Self.serveCommandLine(of: pid)
        for option in try await Self.serveOptions() {
            let expected: String?? = switch option.name {
            case "port": "0"
            case "pid-file": pidFile
            case "ready-fd": "3"
            // With a default, that default; unset optional options and flags that are off are left out.
            default: option.defaultValue.map { .some($0) }
            }
            #expect(forwarded[option.name] == expected,
                    "--\(option.name): expected \(String(describing: expected)), handed over \(String(describing: forwarded[option.name]))")
        }
        let commandLine = try #require(FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"))
        #expect(!String(decoding: commandLine, as: UTF8.self).contains(token), "the token is on the command line")

        // The server has the token all the same, from the environment it inherited.
        #expect(Self.fetch(port, "/__mishap/health")?.status == 401)
        #expect(Self.fetch(port, "/__mishap/health", headers: ["Authorization: Bearer \(token)"])?.status == 200)

        let stop = try await runMishap(["stop"], currentDirectory: folder.path)
        #expect(stop.status == 0, "\(stop)")
    }
}
