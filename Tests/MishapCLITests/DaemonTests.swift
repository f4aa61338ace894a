import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The daemon features of the real `mishap` binary: `start`/`status`/`stop` and their pid file,
/// `--port-file`, reloading on SIGHUP and on edits, the grace period on SIGTERM, the admin API
/// and JSON logs. Serialized: several tests measure time (the one-second reload bound), and a
/// 2-core machine running them side by side would measure the machine instead.
@Suite("mishap daemon", .serialized, .onBlockingThreads)
struct DaemonTests {
    // MARK: Helpers

    /// An HTTP answer read off a raw socket.
    struct Answer {
        let status: Int
        /// Header names lowercased.
        let headers: [String: String]
        let body: String
    }

    /// One HTTP/1.1 request to `host` (an IPv4 address) on a fresh connection (`Connection: close`,
    /// after `headers`, each `Name: value`), read to the end; nil when the connection fails
    /// (refused, reset, or no answer within `timeoutSeconds`). Quicker than running curl, so
    /// polling every 50 ms measures the server rather than process spawning.
    static func fetch(_ port: UInt16, _ path: String, method: String = "GET", host: String = "127.0.0.1",
                      headers: [String] = [], body: String = "", timeoutSeconds: Int = 10) -> Answer? {
        let fields = headers.map { line -> (String, String) in
            let parts = line.split(separator: ":", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? String(parts[1].drop(while: { $0 == " " })) : "")
        }
        guard let connection = try? RawHTTPConnection(port: port, host: host, timeoutSeconds: timeoutSeconds),
              (try? connection.sendRequest(method, path, headers: fields + [("Connection", "close")] + (body.isEmpty ? [("Content-Length", "0")] : []),
                                           body: Array(body.utf8))) != nil,
              let bytes = try? connection.readToEnd() else { return nil }
        return parse(bytes)
    }

    /// Parses a complete HTTP/1.1 response (Content-Length or chunked body).
    static func parse(_ bytes: [UInt8]) -> Answer? {
        let separator = Array("\r\n\r\n".utf8)
        guard bytes.count >= separator.count,
              let end = (0...(bytes.count - separator.count)).first(where: { bytes[$0..<($0 + separator.count)].elementsEqual(separator) })
        else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = head[0].split(separator: " ")
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(bytes[(end + separator.count)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            var decoded: [UInt8] = []
            var index = 0
            while let lineEnd = (index..<max(index, body.count - 1)).first(where: { body[$0] == 13 && body[$0 + 1] == 10 }) {
                let sizeText = String(decoding: body[index..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
                if size == 0 { break }
                let start = lineEnd + 2
                guard start + size <= body.count else { return nil }
                decoded += body[start..<(start + size)]
                index = start + size + 2
            }
            body = decoded
        } else if let length = headers["content-length"].flatMap({ Int($0) }) {
            guard body.count >= length else { return nil }
            body = Array(body.prefix(length))
        }
        return Answer(status: status, headers: headers, body: String(decoding: body, as: UTF8.self))
    }

    /// A JSON object, or nil.
    static func object(_ text: String) -> [String: Any]? {
        guard let data = text.data(using: .utf8) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    /// GETs (or POSTs) an admin path and parses its JSON.
    static func admin(_ port: UInt16, _ path: String, method: String = "GET",
                      sourceLocation: SourceLocation = #_sourceLocation) throws -> (status: Int, json: [String: Any]) {
        let answer = try #require(fetch(port, "/__mishap/" + path, method: method), "no answer from /__mishap/\(path)",
                                  sourceLocation: sourceLocation)
        let json = try #require(object(answer.body), "not a JSON object: \(answer.body)", sourceLocation: sourceLocation)
        return (answer.status, json)
    }

    /// True when the process exists and has not exited (a zombie waiting for its parent to reap
    /// it has exited).
    static func isAlive(_ pid: pid_t) -> Bool {
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        guard let paren = stat.lastIndex(of: ")") else { return true }
        let state = stat[stat.index(after: paren)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }

    /// True when the live process `pid` runs a program named `mishap`.
    static func isMishap(_ pid: pid_t) -> Bool {
        guard isAlive(pid), let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
        let program = String(decoding: data.prefix(while: { $0 != 0 }), as: UTF8.self)
        return (program as NSString).lastPathComponent == "mishap"
    }

    /// Waits (bounded) until `pid` has exited; true when it has.
    static func waitUntilGone(_ pid: pid_t, timeout: Duration) async -> Bool {
        await eventually(within: timeout, every: .milliseconds(20)) { !isAlive(pid) }
    }

    /// Kills (SIGKILL) the background servers a test started, whatever happened to the test:
    /// those it learnt the pid of, and whatever its pid files name, if that is a `mishap`.
    final class Reaper {
        let pidFiles: [String]
        var pids: Set<pid_t> = []

        init(pidFiles: [String]) { self.pidFiles = pidFiles }

        func killAll() {
            var all = pids
            for file in pidFiles {
                if let text = try? String(contentsOfFile: file, encoding: .utf8),
                   let first = text.split(separator: "\n").first, let pid = pid_t(first) {
                    all.insert(pid)
                }
            }
            for pid in all where DaemonTests.isMishap(pid) {
                kill(pid, SIGKILL)
                let deadline = ContinuousClock.now + .seconds(5)
                while DaemonTests.isAlive(pid) && ContinuousClock.now < deadline { usleep(10_000) }
            }
        }
    }

    /// What `mishap start` printed: `mishap running at URL (pid N); pid file P, logs in L`.
    static func started(_ output: String) -> (url: String, pid: pid_t)? {
        let prefix = "mishap running at "
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
        let rest = line.dropFirst(prefix.count)
        guard let space = rest.firstIndex(of: " "), rest[space...].hasPrefix(" (pid ") else { return nil }
        let url = String(rest[..<space])
        let digits = rest[space...].dropFirst(" (pid ".count).prefix(while: \.isNumber)
        guard let pid = pid_t(digits) else { return nil }
        return (url, pid)
    }

    /// The port of `http://127.0.0.1:PORT`.
    static func port(of url: String) -> UInt16? {
        let prefix = "http://127.0.0.1:"
        guard url.hasPrefix(prefix) else { return nil }
        return UInt16(url.dropFirst(prefix.count))
    }

    static func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    /// A listening TCP socket on 127.0.0.1 and a free port, holding that port.
    static func holdPort() throws -> (socket: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        if !bound { close(fd) }
        try #require(bound, "cannot hold a port: \(String(cString: strerror(errno)))")
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// A one-endpoint scenario: `GET /v` answering `text` with `status`.
    static func versionScenario(_ text: String, status: Int = 200) -> String {
        """
        endpoint: GET /v
        rules:
          - name: only
            respond: { status: \(status), text: \(text) }
        """
    }

    /// Polls `GET path` every 50 ms until its body is `expected`: the time from `since` to that
    /// answer, and the answers seen before it that were neither `expected` nor `previous`.
    static func waitForBody(_ port: UInt16, _ path: String, _ expected: String, previous: String,
                            since: ContinuousClock.Instant, timeout: Duration) async -> (elapsed: Duration?, strays: [String]) {
        var strays: [String] = []
        let deadline = since + timeout
        while ContinuousClock.now < deadline {
            let answer = fetch(port, path)
            let arrived = ContinuousClock.now
            if let answer, answer.status == 200, answer.body == expected { return (arrived - since, strays) }
            if answer?.status != 200 || answer?.body != previous {
                strays.append(answer.map { "\($0.status) \($0.body)" } ?? "no answer")
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return (nil, strays)
    }

    /// Waits (bounded) until the server's standard error contains `text`.
    static func waitForLog(_ server: ChildProcess, _ text: String, timeout: Duration) async -> Bool {
        _ = await eventually(within: timeout, every: .milliseconds(20)) { server.standardError.contains(text) || !server.isRunning }
        return server.standardError.contains(text)
    }

    // MARK: start, status, stop

    @Test("start returns once serving and writes the pid file; status reports it; stop ends it and removes the pid file")
    func startStatusStop() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        try FileManager.default.copyItem(atPath: Paths.scenarios, toPath: folder.path + "/scenarios")
        let pidFile = folder.path + "/mishap.pid", logFile = folder.path + "/mishap.log"
        let reaper = Reaper(pidFiles: [pidFile])
        defer { reaper.killAll() }

        // The defaults: ./mishap.pid and ./mishap.log in the working folder.
        let began = ContinuousClock.now
        let start = try await runMishap(["start", "--port", "0", "--scenarios", "scenarios"], currentDirectory: folder.path,
                                       timeout: .seconds(45))
        let took = ContinuousClock.now - began
        #expect(start.status == 0, "\(start)")
        // It returns once the server is ready, not at its 30 s timeout. (Alone it takes well
        // under a second; beside the other suites' processes on two cores, up to about 11 s.)
        #expect(took < .seconds(25), "start took \(took)")
        let (url, pid) = try #require(Self.started(start.standardOutput), "\(start)")
        reaper.pids.insert(pid)
        let port = try #require(Self.port(of: url), "\(url)")
        #expect(port != 0)
        #expect(start.standardOutput.contains("pid file \(pidFile), logs in \(logFile)"), "\(start.standardOutput)")
        #expect(start.standardError.isEmpty, "\(start.standardError)")

        // Serving already: start returned only once the server accepted connections.
        let answer = Self.fetch(port, "/isUserNameAvailable?userName=zaphod")
        #expect(answer?.status == 200, "\(String(describing: answer))")
        #expect(answer?.body == #"{"isAvailable":true,"userName":"zaphod"}"#)

        #expect(Self.read(pidFile) == "\(pid)\n\(url)\n")
        #expect(Self.isMishap(pid))
        #expect(Self.read(logFile)?.contains("mishap listening on \(url)") == true, "\(Self.read(logFile) ?? "no log")")

        let status = try await runMishap(["status", "--pid-file", pidFile])
        #expect(status.status == 0, "\(status)")
        #expect(status.standardOutput == "mishap is running at \(url) (pid \(pid))\n", "\(status)")
        let statusHere = try await runMishap(["status"], currentDirectory: folder.path)
        #expect(statusHere.status == 0, "\(statusHere)")

        // A second start with the same pid file refuses, and leaves the first alone.
        let again = try await runMishap(["start", "--port", "0", "--scenarios", "scenarios"], currentDirectory: folder.path)
        #expect(again.status == 1, "\(again)")
        #expect(again.standardError.contains("already running (pid \(pid), \(url))"), "\(again.standardError)")
        #expect(Self.read(pidFile) == "\(pid)\n\(url)\n")

        let stop = try await runMishap(["stop", "--pid-file", pidFile])
        #expect(stop.status == 0, "\(stop)")
        #expect(stop.standardOutput == "mishap stopped (pid \(pid))\n", "\(stop)")
        // stop returns once the server has exited.
        #expect(!Self.isAlive(pid), "pid \(pid) still runs after stop returned")
        #expect(!FileManager.default.fileExists(atPath: pidFile))
        #expect(Self.fetch(port, "/isUserNameAvailable?userName=zaphod") == nil, "still answering after stop")
        #expect(Self.read(logFile)?.contains("received SIGTERM") == true, "\(Self.read(logFile) ?? "no log")")

        // Nothing else may serve on 8080 meanwhile: status would find it there.
        let after = try await DefaultPortLock.exclusive { try await runMishap(["status", "--pid-file", pidFile]) }
        #expect(after.status == 1, "\(after)")
        #expect(after.standardOutput.contains("not running"), "\(after)")
        // Stopping what is not running is not an error.
        let stopAgain = try await runMishap(["stop", "--pid-file", pidFile])
        #expect(stopAgain.status == 0, "\(stopAgain)")
    }

    @Test("start hands the server none of its caller's descriptors, so a caller waiting for them is not held")
    func startDoesNotLeakDescriptors() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let pidFile = folder.path + "/mishap.pid", logFile = folder.path + "/mishap.log", marker = folder.path + "/marker"
        let reaper = Reaper(pidFiles: [pidFile])
        defer { reaper.killAll() }
        let binary = try #require(Paths.mishap)

        // A caller with descriptor 9 open (not close-on-exec), as a shell, make or a CI runner may have.
        let start = try await run("/bin/sh", ["-c", #"exec 9>>"$1"; shift; exec "$@""#, "sh", marker, binary, "start",
                                              "--port", "0", "--scenarios", Paths.scenarios,
                                              "--pid-file", pidFile, "--log-file", logFile],
                                  timeout: .seconds(15))
        #expect(start.status == 0, "\(start)")
        let (_, pid) = try #require(Self.started(start.standardOutput), "\(start)")
        reaper.pids.insert(pid)
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        let targets = descriptors.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
        #expect(!targets.contains(marker), "the server holds its caller's descriptor: \(targets)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/0") == "/dev/null")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/1") == logFile)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/2") == logFile)

        let stop = try await runMishap(["stop", "--pid-file", pidFile])
        #expect(stop.status == 0, "\(stop)")
    }

    @Test("start on a port that is taken exits 1 with the server's reason and leaves no pid file")
    func startOnTakenPort() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let pidFile = folder.path + "/taken.pid", logFile = folder.path + "/taken.log"
        let reaper = Reaper(pidFiles: [pidFile])
        defer { reaper.killAll() }
        let (holder, port) = try Self.holdPort()
        defer { close(holder) }

        let began = ContinuousClock.now
        let start = try await runMishap(["start", "--port", "\(port)", "--scenarios", Paths.scenarios,
                                         "--pid-file", pidFile, "--log-file", logFile])
        #expect(ContinuousClock.now - began < .seconds(10))
        #expect(start.status == 1, "\(start)")
        #expect(!start.standardOutput.contains("running at"), "\(start.standardOutput)")
        #expect(start.standardError.contains("the server did not start (exit status 1)"), "\(start.standardError)")
        #expect(start.standardError.contains("cannot listen on 127.0.0.1:\(port)"), "\(start.standardError)")
        #expect(start.standardError.contains("Address already in use"), "\(start.standardError)")
        #expect(!FileManager.default.fileExists(atPath: pidFile), "a pid file was left behind")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(leftovers == ["taken.log"], "\(leftovers)")
        #expect(Self.read(logFile)?.contains("cannot listen on 127.0.0.1:\(port)") == true)

        // Nothing else may serve on 8080 meanwhile: status would find it there.
        let status = try await DefaultPortLock.exclusive { try await runMishap(["status", "--pid-file", pidFile]) }
        #expect(status.status == 1, "\(status)")
    }

    @Test("start with a scenarios folder with errors exits 1 and shows where they are")
    func startWithBadScenarios() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        try folder.write("bad/bad.yaml", """
            endpoint: GTE /x
            rules:
              - name: a
                respond: {}
            """)
        let pidFile = folder.path + "/mishap.pid", logFile = folder.path + "/mishap.log"
        let reaper = Reaper(pidFiles: [pidFile])
        defer { reaper.killAll() }

        let start = try await runMishap(["start", "--port", "0", "--scenarios", folder.path + "/bad",
                                         "--pid-file", pidFile, "--log-file", logFile])
        #expect(start.status == 1, "\(start)")
        #expect(!start.standardOutput.contains("running at"), "\(start.standardOutput)")
        #expect(start.standardError.contains("\(folder.path)/bad/bad.yaml:1:11: unknown method 'GTE'"), "\(start.standardError)")
        #expect(start.standardError.contains("1 problem(s) in \(folder.path)/bad; not serving"), "\(start.standardError)")
        #expect(!FileManager.default.fileExists(atPath: pidFile), "a pid file was left behind")
    }

    @Test("A stale pid file: status says so and exits 1, start replaces it, stop cleans up")
    func stalePidFile() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let pidFile = folder.path + "/mishap.pid", logFile = folder.path + "/mishap.log"
        let reaper = Reaper(pidFiles: [pidFile])
        defer { reaper.killAll() }

        // A pid that existed and is gone (reaped).
        let gone = try ChildProcess("/bin/true", [])
        #expect(await gone.waitForExit(timeout: .seconds(10)))
        let stale = gone.pid
        #expect(!Self.isAlive(stale))
        try "\(stale)\nhttp://127.0.0.1:9\n".write(toFile: pidFile, atomically: true, encoding: .utf8)

        // Nothing else may serve on 8080 meanwhile: status would find it there.
        let status = try await DefaultPortLock.exclusive { try await runMishap(["status", "--pid-file", pidFile]) }
        #expect(status.status == 1, "\(status)")
        #expect(status.standardOutput.contains("stale pid file \(pidFile): process \(stale) is gone"), "\(status)")

        let start = try await runMishap(["start", "--port", "0", "--scenarios", Paths.scenarios,
                                         "--pid-file", pidFile, "--log-file", logFile], timeout: .seconds(15))
        #expect(start.status == 0, "\(start)")
        #expect(start.standardOutput.contains("replacing a stale pid file (process \(stale) is gone)"), "\(start)")
        let (url, pid) = try #require(Self.started(start.standardOutput), "\(start)")
        reaper.pids.insert(pid)
        #expect(pid != stale)
        #expect(Self.read(pidFile) == "\(pid)\n\(url)\n")
        let port = try #require(Self.port(of: url))
        #expect(Self.fetch(port, "/isUserNameAvailable?userName=abc")?.status == 400)

        let running = try await runMishap(["status", "--pid-file", pidFile])
        #expect(running.status == 0, "\(running)")

        let stop = try await runMishap(["stop", "--pid-file", pidFile])
        #expect(stop.status == 0, "\(stop)")
        #expect(!Self.isAlive(pid))
        #expect(!FileManager.default.fileExists(atPath: pidFile))
    }

    @Test("A pid file naming a live process that is not mishap is stale: status exits 1, stop leaves that process alone and exits 1")
    func pidFileOfAnotherProgram() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let pidFile = folder.path + "/mishap.pid"
        let other = try ChildProcess("/bin/sleep", ["30"])
        defer { other.kill() }
        try "\(other.pid)\nhttp://127.0.0.1:9\n".write(toFile: pidFile, atomically: true, encoding: .utf8)

        // Nothing else may serve on 8080 meanwhile: status would find it there.
        let status = try await DefaultPortLock.exclusive { try await runMishap(["status", "--pid-file", pidFile]) }
        #expect(status.status == 1, "\(status)")
        #expect(status.standardOutput.contains("stale"), "\(status)")

        let stop = try await runMishap(["stop", "--pid-file", pidFile])
        #expect(stop.status == 1, "\(stop)")
        #expect(stop.standardError.contains("is not a mishap server"), "\(stop)")
        #expect(other.isRunning, "stop signalled a process that is not mishap")
        #expect(!FileManager.default.fileExists(atPath: pidFile), "the stale pid file was kept")
    }

    // MARK: serve options

    @Test("serve --port 0 --port-file writes the bound port; --pid-file holds the pid and URL while serving")
    func portFileAndPidFile() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let portFile = folder.path + "/port", pidFile = folder.path + "/serve.pid"
        let (server, port) = try await ServeTests.startServer(
            ["serve", "--port", "0", "--scenarios", Paths.scenarios, "--port-file", portFile, "--pid-file", pidFile])
        defer { server.kill() }

        // Both are written before the listening line.
        #expect(Self.read(portFile) == "\(port)\n")
        #expect(Self.read(pidFile) == "\(server.pid)\nhttp://127.0.0.1:\(port)\n")
        #expect(Self.fetch(port, "/isUserNameAvailable?userName=abc")?.status == 400)

        server.signal(SIGTERM)
        #expect(await server.waitForExit(timeout: .seconds(10)))
        #expect(server.exitStatus == 0, "\(server.standardError)")
        #expect(!FileManager.default.fileExists(atPath: pidFile), "the pid file outlived the server")
    }

    // MARK: Reloading

    @Test("--watch off: an edit is ignored until SIGHUP; POST /__mishap/reload reloads too")
    func reloadOnSIGHUPOnly() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        try folder.write("v.yaml", Self.versionScenario("one"))
        let (server, port) = try await ServeTests.startServer(["--port", "0", "--scenarios", folder.path, "--watch", "off"])
        defer { server.kill() }
        #expect(Self.fetch(port, "/v")?.body == "one")
        #expect(!server.standardError.contains("watching"), "\(server.standardError)")

        try folder.write("v.yaml", Self.versionScenario("two"))
        // Longer than inotify's settle time and a polling round: a watcher would have reloaded.
        try await Task.sleep(for: .milliseconds(1500))
        for _ in 0..<3 {
            let answer = Self.fetch(port, "/v")
            #expect(answer?.status == 200 && answer?.body == "one", "reloaded without SIGHUP: \(String(describing: answer))")
        }
        #expect((try Self.admin(port, "health").json["reloads"] as? Int) == 0)

        let signalled = ContinuousClock.now
        server.signal(SIGHUP)
        let (elapsed, strays) = await Self.waitForBody(port, "/v", "two", previous: "one", since: signalled, timeout: .seconds(10))
        #expect(elapsed != nil, "no new answer within 10 s of SIGHUP; stderr: \(server.standardError)")
        #expect(strays.isEmpty, "\(strays)")
        #expect(server.standardError.contains("received SIGHUP, reloading"), "\(server.standardError)")
        #expect((try Self.admin(port, "health").json["reloads"] as? Int) == 1)

        // The admin API reloads at once, with counts.
        try folder.write("v.yaml", Self.versionScenario("three"))
        let reload = try Self.admin(port, "reload", method: "POST")
        #expect(reload.status == 200)
        #expect(reload.json["reloaded"] as? Bool == true)
        #expect(reload.json["endpoints"] as? Int == 1)
        #expect(Self.fetch(port, "/v")?.body == "three")

        server.signal(SIGTERM)
        #expect(await server.waitForExit(timeout: .seconds(10)))
        #expect(server.exitStatus == 0)
    }

    @Test("Default watch: an edit answers within 1 s; a broken edit keeps the old rules and logs file:line:column; the fix is picked up")
    func reloadOnEdit() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        try folder.write("v.yaml", Self.versionScenario("one"))
        let (server, port) = try await ServeTests.startServer(["--port", "0", "--scenarios", folder.path])
        defer { server.kill() }
        // inotify where the system grants an instance, polling otherwise: both meet the bound.
        // The line is logged just after the listening line is printed: wait for it.
        #expect(await Self.waitForLog(server, "watching it (", timeout: .seconds(10)), "\(server.standardError)")
        #expect(server.standardError.contains("watching it (inotify)") || server.standardError.contains("watching it (polling)"),
                "\(server.standardError)")
        #expect(Self.fetch(port, "/v")?.body == "one")

        // An edit: measured from the write to the first new answer.
        let written = ContinuousClock.now
        try folder.write("v.yaml", Self.versionScenario("two"))
        let (elapsed, strays) = await Self.waitForBody(port, "/v", "two", previous: "one", since: written, timeout: .seconds(10))
        let reloadTime = try #require(elapsed, "no new answer within 10 s of the edit; stderr: \(server.standardError)")
        print("DaemonTests: edit answered after \(reloadTime) (default watch)")
        #expect(reloadTime < .seconds(1), "the edit took \(reloadTime) to answer")
        #expect(strays.isEmpty, "answers other than the old and the new during the reload: \(strays)")

        // A broken edit: logged with its location, the previous rules keep answering.
        try folder.write("v.yaml", Self.versionScenario("broken", status: 600))
        let location = "\(folder.path)/v.yaml:4:24: 'status' must be an HTTP status code"
        #expect(await Self.waitForLog(server, location, timeout: .seconds(10)), "\(server.standardError)")
        #expect(server.standardError.contains("reload failed; still serving the previous scenarios"), "\(server.standardError)")
        for _ in 0..<3 {
            let answer = Self.fetch(port, "/v")
            #expect(answer?.status == 200 && answer?.body == "two", "\(String(describing: answer))")
        }
        let health = try Self.admin(port, "health").json
        #expect(health["lastReloadFailed"] as? Bool == true, "\(health)")
        let scenarios = try Self.admin(port, "scenarios").json
        let errors = scenarios["lastReloadErrors"] as? [String] ?? []
        #expect(errors.contains { $0.hasPrefix(location) }, "\(scenarios)")

        // The fix is picked up like any edit.
        let fixed = ContinuousClock.now
        try folder.write("v.yaml", Self.versionScenario("three"))
        let (fixElapsed, fixStrays) = await Self.waitForBody(port, "/v", "three", previous: "two", since: fixed, timeout: .seconds(10))
        let fixTime = try #require(fixElapsed, "the fix was not picked up within 10 s; stderr: \(server.standardError)")
        print("DaemonTests: fix answered after \(fixTime) (default watch)")
        #expect(fixTime < .seconds(1), "the fix took \(fixTime) to answer")
        #expect(fixStrays.isEmpty, "\(fixStrays)")
        #expect(try Self.admin(port, "health").json["lastReloadFailed"] as? Bool == false)

        server.signal(SIGTERM)
        #expect(await server.waitForExit(timeout: .seconds(10)))
        #expect(server.exitStatus == 0)
    }

    @Test("--watch poll picks an edit up within 1.5 s")
    func reloadByPolling() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        try folder.write("v.yaml", Self.versionScenario("one"))
        let (server, port) = try await ServeTests.startServer(["--port", "0", "--scenarios", folder.path, "--watch", "poll"])
        defer { server.kill() }
        // The listening line (standard output) can come before the serving line (standard
        // error), which says the watcher is armed: waited for, as the default watch's test does.
        #expect(await Self.waitForLog(server, "watching it (polling)", timeout: .seconds(10)), "\(server.standardError)")
        #expect(Self.fetch(port, "/v")?.body == "one")

        let written = ContinuousClock.now
        try folder.write("v.yaml", Self.versionScenario("two"))
        let (elapsed, strays) = await Self.waitForBody(port, "/v", "two", previous: "one", since: written, timeout: .seconds(10))
        let reloadTime = try #require(elapsed, "no new answer within 10 s of the edit; stderr: \(server.standardError)")
        print("DaemonTests: edit answered after \(reloadTime) (polling)")
        #expect(reloadTime < .milliseconds(1500), "the edit took \(reloadTime) to answer")
        #expect(strays.isEmpty, "\(strays)")

        server.signal(SIGTERM)
        #expect(await server.waitForExit(timeout: .seconds(10)))
        #expect(server.exitStatus == 0)
    }

    // MARK: Stopping gracefully

    static let slowScenario = """
        endpoint: GET /slow
        rules:
          - name: slow
            respond: { status: 200, text: done, delay: 1500ms }
        """

    /// Starts curl on `GET /slow` and waits (bounded) until the server has the request, as the
    /// journal shows.
    static func requestSlow(_ port: UInt16, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ChildProcess {
        let client = try ChildProcess(ServeTests.curl, ["-s", "--max-time", "30", "-w", "\n%{http_code}", "http://127.0.0.1:\(port)/slow"])
        let received = await eventually(within: .seconds(10), every: .milliseconds(20)) {
            guard let answer = fetch(port, "/__mishap/requests?path=/slow"), let journal = object(answer.body),
                  let requests = journal["requests"] as? [Any] else { return false }
            return !requests.isEmpty
        }
        if received { return client }
        client.kill()
        Issue.record("the server never received GET /slow", sourceLocation: sourceLocation)
        throw NotListening()
    }

    @Test("SIGTERM during a delayed response: the client gets all of it, then the server exits 0")
    func terminateDuringDelay() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        try folder.write("slow.yaml", Self.slowScenario)
        let (server, port) = try await ServeTests.startServer(["--port", "0", "--scenarios", folder.path])
        defer { server.kill() }
        let client = try await Self.requestSlow(port)
        defer { client.kill() }

        server.signal(SIGTERM)
        #expect(await client.waitForExit(timeout: .seconds(10)), "curl still waiting 10 s after SIGTERM")
        #expect(client.exitStatus == 0, "curl: \(client.standardError)")
        #expect(client.standardOutput == "done\n200", "\(client.standardOutput)")
        #expect(await server.waitForExit(timeout: .seconds(30)), "still running 30 s after SIGTERM")
        // It waited for the response, not for the whole grace period (10 s).
        ServeTests.expectStopped(server, within: 6, after: "SIGTERM")
        #expect(server.exitStatus == 0, "\(server.standardError)")
        #expect(server.standardError.contains("letting 1 request(s) in flight finish"), "\(server.standardError)")
        #expect(!server.standardError.contains("cut short"), "\(server.standardError)")
        #expect(server.standardError.contains("GET /slow status=200"), "\(server.standardError)")
        #expect(!server.standardError.contains("closedEarly"), "\(server.standardError)")
    }

    @Test("stop during a delayed response of a started server: the client gets all of it, stop returns after")
    func stopDuringDelay() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        try folder.write("scenarios/slow.yaml", Self.slowScenario)
        let pidFile = folder.path + "/mishap.pid", logFile = folder.path + "/mishap.log"
        let reaper = Reaper(pidFiles: [pidFile])
        defer { reaper.killAll() }
        let start = try await runMishap(["start", "--port", "0", "--scenarios", folder.path + "/scenarios",
                                         "--pid-file", pidFile, "--log-file", logFile], timeout: .seconds(15))
        #expect(start.status == 0, "\(start)")
        let (url, pid) = try #require(Self.started(start.standardOutput), "\(start)")
        reaper.pids.insert(pid)
        let port = try #require(Self.port(of: url))
        let client = try await Self.requestSlow(port)
        defer { client.kill() }

        let stop = try await runMishap(["stop", "--pid-file", pidFile])
        #expect(stop.status == 0, "\(stop)")
        // stop returned once the server had exited, which it did only after answering.
        #expect(!Self.isAlive(pid))
        #expect(await client.waitForExit(timeout: .seconds(10)))
        #expect(client.standardOutput == "done\n200", "\(client.standardOutput)")
        let log = Self.read(logFile) ?? ""
        #expect(log.contains("letting 1 request(s) in flight finish"), "\(log)")
        #expect(log.contains("GET /slow status=200"), "\(log)")
        #expect(!log.contains("cut short"), "\(log)")
    }

    // MARK: Admin API

    @Test("Admin API through the binary: a journal of --journal-size entries, Retry-After violations, reset")
    func adminEndpoints() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        try folder.write("admin.yaml", """
            endpoints:
              - endpoint: GET /j
                rules: [{ name: plain, respond: { text: ok } }]
              - endpoint: GET /limited
                rules: [{ name: slowDown, respond: { status: 429, headers: { Retry-After: "5" }, text: slow down } }]
            """)
        let (server, port) = try await ServeTests.startServer(["--port", "0", "--scenarios", folder.path, "--journal-size", "3"])
        defer { server.kill() }

        for number in 1...5 { #expect(Self.fetch(port, "/j?n=\(number)")?.body == "ok") }
        let journal = try Self.admin(port, "requests")
        #expect(journal.status == 200)
        let requests = journal.json["requests"] as? [[String: Any]] ?? []
        #expect(requests.count == 3, "\(journal.json)")
        #expect(journal.json["capacity"] as? Int == 3)
        #expect(journal.json["dropped"] as? Int == 2, "\(journal.json)")
        // The last three, oldest first.
        #expect(requests.map { ($0["query"] as? [[String]])?.first?.last ?? "?" } == ["3", "4", "5"], "\(requests)")
        #expect(requests.allSatisfy { $0["path"] as? String == "/j" && $0["rule"] as? String == "plain" && $0["status"] as? Int == 200 })

        // Told to wait 5 s, the client comes back at once.
        let first = try #require(Self.fetch(port, "/limited"))
        #expect(first.status == 429)
        #expect(first.headers["retry-after"] == "5")
        #expect(Self.fetch(port, "/limited")?.status == 429)
        let retries = try Self.admin(port, "retries").json
        #expect(retries["violations"] as? Int == 1, "\(retries)")
        let observations = retries["retries"] as? [[String: Any]] ?? []
        #expect(observations.count == 2, "\(retries)")
        if let violated = observations.first {
            #expect(violated["honoured"] as? Bool == false, "\(violated)")
            #expect(violated["retryAfter"] as? String == "5")
            #expect(violated["requiredMs"] as? Int == 5000)
            #expect(violated["rule"] as? String == "slowDown")
            #expect(violated["status"] as? Int == 429)
            #expect((violated["waitedMs"] as? Int).map { $0 >= 0 && $0 < 5000 } == true, "\(violated)")
        }
        if observations.count == 2 { #expect(observations[1]["honoured"] is NSNull, "the second has not been followed yet") }

        let reset = try Self.admin(port, "reset", method: "POST")
        #expect(reset.status == 200)
        #expect(reset.json["reset"] as? String == "all")
        let emptied = try Self.admin(port, "requests").json
        #expect((emptied["requests"] as? [Any])?.isEmpty == true, "\(emptied)")
        #expect(emptied["dropped"] as? Int == 0)
        let noRetries = try Self.admin(port, "retries").json
        #expect((noRetries["retries"] as? [Any])?.isEmpty == true, "\(noRetries)")
        #expect(noRetries["violations"] as? Int == 0)
    }

    @Test("--no-admin: /__mishap/ paths are not answered by the admin API")
    func noAdmin() async throws {
        let (server, port) = try await ServeTests.startServer(["--port", "0", "--scenarios", Paths.scenarios, "--no-admin"])
        defer { server.kill() }
        let health = try #require(Self.fetch(port, "/__mishap/health"))
        #expect(health.status == 404, "\(health)")
        #expect(!health.body.contains(#""status":"ok""#), "\(health.body)")
        #expect(Self.fetch(port, "/__mishap/requests")?.status == 404)
        #expect(Self.fetch(port, "/__mishap/reset", method: "POST")?.status == 404)
        #expect(Self.fetch(port, "/isUserNameAvailable?userName=zaphod")?.status == 200)

        // With the admin API (the default) the same path answers.
        let (withAdmin, adminPort) = try await ServeTests.startServer(["--port", "0", "--scenarios", Paths.scenarios])
        defer { withAdmin.kill() }
        let ok = try Self.admin(adminPort, "health")
        #expect(ok.status == 200)
        #expect(ok.json["status"] as? String == "ok")
        #expect(ok.json["endpoints"] as? Int == DeclaredScenario.defaultFiles.count)
    }

    // MARK: Logs

    @Test("--log-format json: every line on standard output and error is a JSON object, with numbers, booleans and located problems as such")
    func jsonLogs() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        try folder.write("v.yaml", Self.versionScenario("one"))
        try folder.write("r.yaml", "endpoint: GET /reset\nrules:\n  - name: reset\n    respond: { fault: reset }\n")
        let (server, port) = try await ServeTests.startServer(
            ["--port", "0", "--scenarios", folder.path, "--log-format", "json", "--watch", "off"])
        defer { server.kill() }
        #expect(Self.fetch(port, "/v")?.status == 200)
        #expect(Self.fetch(port, "/nowhere")?.status == 404)
        #expect(Self.fetch(port, "/reset") == nil)
        // A failed reload's message spans lines in text: in JSON it must stay one line.
        try folder.write("v.yaml", Self.versionScenario("broken", status: 600))
        server.signal(SIGHUP)
        #expect(await Self.waitForLog(server, "reload failed", timeout: .seconds(10)), "\(server.standardError)")
        server.signal(SIGTERM)
        #expect(await server.waitForExit(timeout: .seconds(10)))
        #expect(server.exitStatus == 0)

        let lines = server.standardError.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(server.standardError.hasSuffix("\n"))
        #expect(lines.count >= 5, "\(server.standardError)")
        var objects: [[String: Any]] = []
        for line in lines {
            guard let object = Self.object(line) else {
                Issue.record("not a JSON object: \(line)")
                continue
            }
            #expect(object["time"] is String && object["level"] is String && object["message"] is String, "\(line)")
            objects.append(object)
        }
        let request = objects.first { $0["path"] as? String == "/v" }
        #expect(request?["method"] as? String == "GET", "\(String(describing: request))")
        #expect(request?["status"] as? Int == 200, "\(String(describing: request))")
        #expect(request?["rule"] as? String == "only", "\(String(describing: request))")
        #expect(request?["level"] as? String == "info")
        let missing = objects.first { $0["path"] as? String == "/nowhere" }
        #expect(missing?["method"] as? String == "GET")
        #expect(missing?["status"] as? Int == 404, "\(String(describing: missing))")
        #expect(request?["durationMs"] is Double || request?["durationMs"] is Int, "\(String(describing: request))")
        let reset = objects.first { $0["path"] as? String == "/reset" }
        #expect(reset?["fault"] as? String == "reset" && reset?["closedEarly"] as? Bool == true, "\(String(describing: reset))")
        let failure = objects.first { ($0["message"] as? String)?.contains("reload failed") == true }
        #expect(failure?["level"] as? String == "error")
        let problems = failure?["problems"] as? [[String: Any]]
        #expect(problems?.count == 1, "\(String(describing: failure))")
        #expect(problems?.first?["file"] as? String == "\(folder.path)/v.yaml" && problems?.first?["line"] as? Int == 4
                && problems?.first?["column"] as? Int == 24 && (problems?.first?["message"] as? String)?.contains("status") == true,
                "\(String(describing: failure))")
        // Standard output: the listening line, as JSON too.
        let output = server.standardOutput.split(separator: "\n").map(String.init)
        #expect(output.count == 1 && Self.object(output[0])?["url"] as? String == "http://127.0.0.1:\(port)", "\(server.standardOutput)")
    }

    @Test("--log-format json: a server that cannot start says why in JSON lines")
    func jsonStartupFailures() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        try folder.write("v.yaml", Self.versionScenario("broken", status: 600))
        let broken = try await runMishap(["serve", "--port", "0", "--scenarios", folder.path, "--log-format", "json"])
        #expect(broken.status == 1)
        let brokenLines = broken.standardError.split(separator: "\n").map(String.init)
        #expect(!brokenLines.isEmpty && brokenLines.allSatisfy { Self.object($0) != nil }, "\(broken.standardError)")
        let problems = brokenLines.compactMap(Self.object).first?["problems"] as? [[String: Any]]
        #expect(problems?.first?["line"] as? Int == 4, "\(broken.standardError)")

        try folder.write("v.yaml", Self.versionScenario("one"))
        let (holder, port) = try await ServeTests.startServer(["--port", "0", "--scenarios", folder.path])
        defer { holder.kill() }
        let taken = try await runMishap(["serve", "--port", "\(port)", "--scenarios", folder.path, "--log-format", "json"])
        #expect(taken.status == 1)
        let takenLines = taken.standardError.split(separator: "\n").map(String.init)
        #expect(!takenLines.isEmpty && takenLines.allSatisfy { Self.object($0) != nil }, "\(taken.standardError)")
        #expect(takenLines.contains { (Self.object($0)?["message"] as? String)?.contains("cannot listen") == true }, "\(taken.standardError)")
        #expect(taken.standardOutput.isEmpty)
    }
}
