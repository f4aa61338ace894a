import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `mishap serve` as a real process: startup line, answers, signals, startup failures.

@Suite("mishap serve", .onBlockingThreads)
struct ServeTests {
    static let curl = "/usr/bin/curl"

    /// Sends `signal` and expects the server to exit 0, having stopped within 5 s of receiving it.
    static func expectCleanExit(_ server: ChildProcess, on signal: Int32, named name: String,
                                sourceLocation: SourceLocation = #_sourceLocation) async {
        server.signal(signal)
        let exited = await server.waitForExit(timeout: .seconds(30))
        #expect(exited, "still running 30 s after \(name)", sourceLocation: sourceLocation)
        expectStopped(server, within: 5, after: name, sourceLocation: sourceLocation)
        #expect(server.process.terminationReason == .exit, sourceLocation: sourceLocation)
        #expect(server.exitStatus == 0, "stderr: \(server.standardError)", sourceLocation: sourceLocation)
        #expect(server.standardError.contains(name), "\(server.standardError)", sourceLocation: sourceLocation)
    }

    /// Expects the server's log to say it received `signal` and then, less than `seconds` later by
    /// its own clock, that it stopped. Timed here, from sending the signal to seeing the process
    /// gone, the span would also hold the test runner's own delays: on a loaded 2-core machine,
    /// with dozens of servers starting at once, those alone have reached 5 s.
    static func expectStopped(_ server: ChildProcess, within seconds: Double, after signal: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        let log = server.standardError
        guard let received = loggedTime(of: "received \(signal), stopping", in: log),
              let stopped = loggedTime(of: "info stopped", in: log) else {
            Issue.record("no 'received \(signal)' and 'stopped' lines: \(log)", sourceLocation: sourceLocation)
            return
        }
        let took = (stopped - received + 86_400).truncatingRemainder(dividingBy: 86_400)
        #expect(took < seconds, "stopping took \(took) s: \(log)", sourceLocation: sourceLocation)
    }

    /// The time of day, in seconds, of the first log line containing `text`, from the line's
    /// leading timestamp (`2026-11-26T22:29:31.662Z info ...`).
    static func loggedTime(of text: String, in log: String) -> Double? {
        guard let line = log.split(separator: "\n").first(where: { $0.contains(text) }),
              let t = line.firstIndex(of: "T"), let z = line[t...].firstIndex(of: "Z") else { return nil }
        let fields = line[line.index(after: t)..<z].split(separator: ":")
        guard fields.count == 3, let hours = Double(fields[0]), let minutes = Double(fields[1]),
              let secondsOfMinute = Double(fields[2]) else { return nil }
        return hours * 3600 + minutes * 60 + secondsOfMinute
    }

    /// Starts `mishap` with `arguments` and waits for its listening line (`ChildProcess.serving`).
    static func startServer(_ arguments: [String],
                            sourceLocation: SourceLocation = #_sourceLocation) async throws -> (ChildProcess, UInt16) {
        let (server, _, port) = try await ChildProcess.serving(arguments, sourceLocation: sourceLocation)
        return (server, port)
    }

    /// GETs (or POSTs) with curl and returns the body; `-w` appends the status on its own line.
    static func curl(_ url: String, extra: [String] = []) async throws -> (status: Int?, body: String) {
        let result = try await run(curl, ["-s", "--max-time", "10", "-w", "\n%{http_code}"] + extra + [url],
                                   timeout: .seconds(20))
        #expect(result.status == 0, "curl failed: \(result)")
        let output = result.standardOutput
        guard let newline = output.lastIndex(of: "\n") else { return (nil, output) }
        return (Int(output[output.index(after: newline)...]), String(output[..<newline]))
    }

    @Test("serve prints where it listens, answers, and exits 0 on SIGTERM")
    func serveAndTerminate() async throws {
        let (server, port) = try await Self.startServer(
            ["serve", "--port", "0", "--scenarios", Paths.scenarios, "--threads", "2"])
        defer { server.kill() }

        let short = try await Self.curl("http://127.0.0.1:\(port)/isUserNameAvailable?userName=abc")
        #expect(short.status == 400)
        #expect(short.body == #"{"error":true,"reason":"Username is too short."}"#)

        let login = try await Self.curl("http://127.0.0.1:\(port)/login", extra: [
            "-H", "Content-Type: application/json", "--data", #"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#,
        ])
        #expect(login.status == 200)
        #expect(login.body == #"{"user_id":"123","token":"c7d83mdla_3ms"}"#)

        let missing = try await Self.curl("http://127.0.0.1:\(port)/nowhere")
        #expect(missing.status == 404)

        await Self.expectCleanExit(server, on: SIGTERM, named: "SIGTERM")
    }

    /// `--upstream` in front of a real server that is not Mishap (Python's http.server): what
    /// no rule answers comes from it, what a rule answers does not, and the log line says which.
    @Test("serve --upstream passes to another server what no rule answers")
    func upstream() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        try "from the upstream\n".write(toFile: folder.path + "/hello.txt", atomically: true, encoding: .utf8)
        let python = try ChildProcess("/usr/bin/env", ["python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
                                                       "--directory", folder.path])
        defer { python.kill() }
        let serving = await python.firstOutputLine(timeout: .seconds(20)) ?? ""
        let upstreamPort = try #require(serving.split(separator: " ").first { Int($0) != nil }.flatMap { UInt16($0) }, "\(serving)")
        let (server, port) = try await Self.startServer(
            ["serve", "--port", "0", "--scenarios", Paths.scenarios, "--upstream", "http://127.0.0.1:\(upstreamPort)"])
        defer { server.kill() }

        let passed = try await Self.curl("http://127.0.0.1:\(port)/hello.txt")
        #expect(passed.status == 200 && passed.body == "from the upstream\n", "\(passed)")
        let missing = try await Self.curl("http://127.0.0.1:\(port)/nowhere.txt")
        #expect(missing.status == 404, "the upstream's own 404: \(missing)")
        let ruled = try await Self.curl("http://127.0.0.1:\(port)/isUserNameAvailable?userName=abc")
        #expect(ruled.status == 400 && ruled.body == #"{"error":true,"reason":"Username is too short."}"#)
        #expect(await ServeTests.eventually { server.standardError.contains("GET /hello.txt status=200") },
                "\(server.standardError)")
        #expect(server.standardError.contains("upstream=http://127.0.0.1:\(upstreamPort)"), "\(server.standardError)")
        await Self.expectCleanExit(server, on: SIGTERM, named: "SIGTERM")
    }

    /// Whether `condition` holds within 5 s.
    static func eventually(_ condition: @escaping () -> Bool) async -> Bool {
        for _ in 0..<250 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    @Test("--event-loop poll serves with no epoll descriptor, epoll with one per worker thread", arguments: ["poll", "epoll"])
    func eventLoopIsTheOneAskedFor(_ loop: String) async throws {
        let (server, port) = try await Self.startServer(
            ["serve", "--port", "0", "--scenarios", Paths.scenarios, "--threads", "3", "--watch", "off", "--event-loop", loop])
        defer { server.kill() }
        let answer = try await Self.curl("http://127.0.0.1:\(port)/isUserNameAvailable?userName=zaphod")
        #expect(answer.status == 200 && answer.body == #"{"isAvailable":true,"userName":"zaphod"}"#)
        // What each of the server's descriptors is: an epoll instance reads as anon_inode:[eventpoll].
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(server.pid)/fd")) ?? []
        let epolls = descriptors.filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(server.pid)/fd/\($0)")) == "anon_inode:[eventpoll]"
        }.count
        if loop == "poll" {
            #expect(epolls == 0, "\(epolls) epoll descriptors under --event-loop poll")
        } else {
            #expect(epolls >= 3, "\(epolls) epoll descriptors for 3 worker threads")
        }
        server.signal(SIGTERM)
        #expect(await server.waitForExit(timeout: .seconds(10)))
        #expect(server.standardError.contains("(\(loop) event loop)"), "\(server.standardError)")
    }

    @Test("mishap without a subcommand serves, and exits 0 on SIGINT")
    func defaultSubcommandAndInterrupt() async throws {
        let (server, port) = try await Self.startServer(["--port", "0", "--scenarios", Paths.scenarios])
        defer { server.kill() }

        let available = try await Self.curl("http://127.0.0.1:\(port)/isUserNameAvailable?userName=zaphod")
        #expect(available.status == 200)
        #expect(available.body == #"{"isAvailable":true,"userName":"zaphod"}"#)

        await Self.expectCleanExit(server, on: SIGINT, named: "SIGINT")
    }

    @Test("SIGTERM stops the server promptly even with a client connection left open")
    func terminateWithOpenConnection() async throws {
        let (server, port) = try await Self.startServer(["serve", "--port", "0", "--scenarios", Paths.scenarios])
        defer { server.kill() }

        // A client that sent half a request and waits.
        let socket = try RawHTTPConnection(port: port)
        defer { socket.close() }
        let partial = Array("GET /isUserNameAvailable?userName=abc HTTP/1.1\r\nHost: x\r\n".utf8)
        #expect(socket.write(partial) == nil)
        try await Task.sleep(for: .milliseconds(200))

        server.signal(SIGTERM)
        let exited = await server.waitForExit(timeout: .seconds(30))
        #expect(exited, "still running 30 s after SIGTERM with an open connection")
        Self.expectStopped(server, within: 5, after: "SIGTERM")
        #expect(server.exitStatus == 0, "stderr: \(server.standardError)")
    }

    @Test("SIGTERM stops the server within its grace period while a response is still being delayed, held or dribbled",
          arguments: ["/held", "/delayed", "/dribbled"])
    func terminateDuringSlowResponse(path: String) async throws {
        let folder = try TemporaryFolder()
        try folder.write("slow.yaml", """
            endpoints:
              - endpoint: GET /held
                rules: [{ name: held, respond: { hang: true } }]
              - endpoint: GET /delayed
                rules: [{ name: delayed, respond: { delay: { min: 20000, max: 30000 }, text: late } }]
              - endpoint: GET /dribbled
                rules: [{ name: dribbled, respond: { dribble: { chunks: 5, duration: 30s }, text: "0123456789" } }]
            """)
        // Responses longer than the grace period are cut short when it ends; hangs at once.
        let (server, port) = try await Self.startServer(["--port", "0", "--scenarios", folder.path, "--grace", "1"])
        defer { server.kill() }
        let client = try ChildProcess(Self.curl, ["-s", "--max-time", "40", "http://127.0.0.1:\(port)\(path)"])
        defer { client.kill() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(client.isRunning, "the request should still be waiting")

        server.signal(SIGTERM)
        let exited = await server.waitForExit(timeout: .seconds(30))
        #expect(exited, "still running 30 s after SIGTERM with \(path) in flight")
        // Well within the 20 s the shortest of those responses would take.
        Self.expectStopped(server, within: 5, after: "SIGTERM")
        #expect(server.exitStatus == 0, "stderr: \(server.standardError)")
        // The client is let go too, rather than waiting for its own timeout.
        #expect(await client.waitForExit(timeout: .seconds(10)))
    }

    @Test("--max-body, --rule-header and --log-level reach the server")
    func serveOptions() async throws {
        let (server, port) = try await Self.startServer([
            "serve", "--port", "0", "--scenarios", Paths.scenarios, "--threads", "1",
            "--max-body", "16", "--rule-header", "X-Force", "--log-level", "warning",
        ])
        defer { server.kill() }

        let large = try await Self.curl("http://127.0.0.1:\(port)/login", extra: [
            "-H", "Content-Type: application/json", "--data", #"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#,
        ])
        #expect(large.status == 413)
        let small = try await Self.curl("http://127.0.0.1:\(port)/login", extra: [
            "-H", "Content-Type: application/json", "--data", #"{"email":"x"}"#,
        ])
        #expect(small.status == 400)

        let forced = try await Self.curl("http://127.0.0.1:\(port)/isUserNameAvailable?userName=zaphod",
                                         extra: ["-H", "X-Force: tooShort"])
        #expect(forced.status == 400)
        #expect(forced.body == #"{"error":true,"reason":"Username is too short."}"#)

        server.signal(SIGTERM)
        #expect(await server.waitForExit(timeout: .seconds(10)))
        #expect(server.exitStatus == 0)
        // At warning level, the info lines (serving..., received SIGTERM...) are not logged.
        #expect(!server.standardError.contains(" info "), "\(server.standardError)")
    }

    @Test("The scenarios folder is the one named, in every spelling of the option, and --max-header-size applies",
          arguments: [["--scenarios=FOLDER"], ["--scenarios", "./scenarios", "--scenarios", "FOLDER"], ["serve", "--scenarios", "FOLDER"]])
    func scenariosOptionSpellings(_ spelling: [String]) async throws {
        // The folder is read while the command line is parsed (ScenarioPrefetch); whatever the
        // spelling, the folder served must be the one ArgumentParser settles on.
        let folder = try TemporaryFolder()
        try folder.write("only.yaml", """
            endpoint: GET /only
            rules:
              - name: here
                respond: { status: 299, text: "from the named folder" }
            """)
        let arguments = spelling.map { $0.replacingOccurrences(of: "FOLDER", with: folder.path) }
        let (server, port) = try await Self.startServer(arguments + ["--port", "0", "--max-header-size", "2048"])
        defer { server.kill() }

        let only = try await Self.curl("http://127.0.0.1:\(port)/only")
        #expect(only.status == 299)
        #expect(only.body == "from the named folder")
        let big = try await Self.curl("http://127.0.0.1:\(port)/only", extra: ["-H", "X-Big: \(String(repeating: "b", count: 3000))"])
        #expect(big.status == 431)
        server.signal(SIGTERM)
        #expect(await server.waitForExit(timeout: .seconds(10)))
    }

    @Test("A scenarios folder with errors: exit 1, located errors, never listens")
    func badScenariosDoNotServe() async throws {
        let folder = try TemporaryFolder()
        try folder.write("bad.yaml", """
            endpoint: GTE /x
            rules:
              - name: a
                respond: {}
            """)
        try folder.write("more.yaml", """
            endpoint: GET /y
            rules:
              - name: a
                respond: { status: 600 }
            """)
        let result = try await runMishap(["--port", "0", "--scenarios", folder.path])
        #expect(result.status == 1, "\(result)")
        #expect(!result.standardOutput.contains("listening"), "\(result.standardOutput)")
        #expect(result.standardOutput.isEmpty, "\(result.standardOutput)")
        let lines = result.standardError.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("\(folder.path)/bad.yaml:1:11: unknown method 'GTE' (did you mean 'GET'?)") },
                "\(result.standardError)")
        #expect(lines.contains { $0.hasPrefix("\(folder.path)/more.yaml:4:24: 'status' must be an HTTP status code") },
                "\(result.standardError)")
        #expect(lines.last == "mishap: 2 problem(s) in \(folder.path); not serving", "\(result.standardError)")
    }

    @Test("A port in use: the second server exits non-zero naming the port")
    func portInUse() async throws {
        let (first, port) = try await Self.startServer(["--port", "0", "--scenarios", Paths.scenarios])
        defer { first.kill() }

        let second = try await runMishap(["serve", "--port", "\(port)", "--scenarios", Paths.scenarios])
        #expect(second.status != nil && second.status != 0, "\(second)")
        #expect(!second.standardOutput.contains("listening"), "\(second.standardOutput)")
        #expect(second.standardError.contains("\(port)"), "\(second.standardError)")
        #expect(second.standardError.contains("cannot listen on 127.0.0.1:\(port)"), "\(second.standardError)")

        // The first server is unaffected.
        let answer = try await Self.curl("http://127.0.0.1:\(port)/isUserNameAvailable")
        #expect(answer.status == 400)
        first.signal(SIGTERM)
        #expect(await first.waitForExit(timeout: .seconds(10)))
        #expect(first.exitStatus == 0)
    }

    @Test("A host that does not resolve: exit 1 with a message")
    func unresolvableHost() async throws {
        let result = try await runMishap(["--host", "no-such-host.invalid", "--port", "0", "--scenarios", Paths.scenarios])
        #expect(result.status == 1, "\(result)")
        #expect(!result.standardOutput.contains("listening"))
        #expect(result.standardError.contains("no-such-host.invalid"), "\(result.standardError)")
    }
}
