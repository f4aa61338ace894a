import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The pid file of `start`, `serve`, `stop` and `status` as a claim: one server per pid file
/// however many start at once, no server left running behind a pid file that could not be
/// written, and no signal for a process the pid file names that is not the server holding it.
/// Part of the daemon suite, so these run one at a time like its other tests.
extension DaemonTests {
    /// The live `mishap serve` processes (found in /proc) started with `--pid-file=PATH`, as
    /// `start` hands it over, or `--pid-file PATH`.
    static func servers(pidFile: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { pid in
            guard isAlive(pid), let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard words.count >= 2, (words[0] as NSString).lastPathComponent == "mishap", words[1] == "serve" else { return false }
            return words.contains("--pid-file=\(pidFile)")
                || zip(words, words.dropFirst()).contains { $0 == "--pid-file" && $1 == pidFile }
        }
    }

    /// Kills (SIGKILL) every server started with `pidFile`, whatever the test saw of them.
    static func killServers(pidFile: String) {
        for pid in servers(pidFile: pidFile) {
            kill(pid, SIGKILL)
            let deadline = ContinuousClock.now + .seconds(5)
            while isAlive(pid) && ContinuousClock.now < deadline { usleep(10_000) }
        }
    }

    /// Whether `pid` was sent SIGTERM and is still alive: it has it pending (children of the test
    /// process may inherit a mask that blocks it, so a signal sent may not end them).
    static func hasPendingSIGTERM(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
        let bit = UInt64(1) << UInt64(SIGTERM - 1)
        return status.split(separator: "\n").contains { line in
            guard line.hasPrefix("SigPnd:") || line.hasPrefix("ShdPnd:") else { return false }
            let mask = UInt64(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces), radix: 16) ?? 0
            return mask & bit != 0
        }
    }

    @Test("Two starts at once on one pid file: one exits 0, the other 1 with 'already running'; one server runs, and stop leaves none", arguments: 0..<4)
    func concurrentStarts(round: Int) async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let pidFile = folder.path + "/mishap.pid"
        defer { Self.killServers(pidFile: pidFile) }

        let starts = try (0..<2).map { index in
            try ChildProcess.mishap(["start", "--port", "0", "--scenarios", Paths.scenarios, "--pid-file", pidFile,
                                     "--log-file", folder.path + "/mishap-\(index).log"])
        }
        for start in starts { #expect(await start.waitForExit(timeout: .seconds(20)), "start still runs") }
        let report = starts.map { "exit \(String(describing: $0.exitStatus)): \($0.standardOutput) \($0.standardError)" }
        #expect(starts.map(\.exitStatus).sorted { ($0 ?? -1) < ($1 ?? -1) } == [0, 1], "\(report)")
        let winner = try #require(starts.first { $0.exitStatus == 0 }, "\(report)")
        let loser = try #require(starts.first { $0.exitStatus == 1 }, "\(report)")
        #expect(loser.standardError.contains("already running"), "\(report)")
        #expect(!loser.standardOutput.contains("running at"), "\(report)")
        let (url, pid) = try #require(Self.started(winner.standardOutput), "\(report)")

        // One server, the winner's, named by the pid file; none was started and left by the loser.
        try await Task.sleep(for: .milliseconds(200))
        #expect(Self.servers(pidFile: pidFile) == [pid], "servers: \(Self.servers(pidFile: pidFile)), \(report)")
        #expect(Self.read(pidFile) == "\(pid)\n\(url)\n")
        let status = try await runMishap(["status", "--pid-file", pidFile])
        #expect(status.standardOutput == "mishap is running at \(url) (pid \(pid))\n", "\(status)")

        let stop = try await runMishap(["stop", "--pid-file", pidFile])
        #expect(stop.status == 0, "\(stop)")
        let none = await eventually(within: .seconds(5), every: .milliseconds(20)) { Self.servers(pidFile: pidFile).isEmpty }
        #expect(none, "still running after stop: \(Self.servers(pidFile: pidFile))")
        #expect(!FileManager.default.fileExists(atPath: pidFile))
    }

    @Test("serve --pid-file naming the pid file of a running server exits 1 with 'already running' and leaves the file alone")
    func serveOnAHeldPidFile() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let pidFile = folder.path + "/mishap.pid"
        defer { Self.killServers(pidFile: pidFile) }
        let start = try await runMishap(["start", "--port", "0", "--scenarios", Paths.scenarios, "--pid-file", pidFile,
                                         "--log-file", folder.path + "/mishap.log"], timeout: .seconds(15))
        #expect(start.status == 0, "\(start)")
        let (url, pid) = try #require(Self.started(start.standardOutput), "\(start)")

        let serve = try await runMishap(["serve", "--port", "0", "--scenarios", Paths.scenarios, "--pid-file", pidFile],
                                        timeout: .seconds(10))
        #expect(serve.status == 1, "\(serve)")
        #expect(serve.standardError.contains("already running (pid \(pid), \(url))"), "\(serve)")
        #expect(!serve.standardOutput.contains("listening"), "\(serve)")
        #expect(Self.read(pidFile) == "\(pid)\n\(url)\n")
        #expect(Self.servers(pidFile: pidFile) == [pid])

        let stop = try await runMishap(["stop", "--pid-file", pidFile])
        #expect(stop.status == 0, "\(stop)")
        #expect(!Self.isAlive(pid))
    }

    @Test("start and serve with a pid file that cannot be written exit 1 saying so; no server runs and no file is left", arguments: [
        "file/mishap.pid",  // under a regular file: refused even to root
        "missing/mishap.pid",  // in a folder that does not exist
    ])
    func unwritablePidFile(relative: String) async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        try folder.write("file", "a regular file, not a folder\n")
        let pidFile = folder.path + "/" + relative
        defer { Self.killServers(pidFile: pidFile) }

        let start = try await runMishap(["start", "--port", "0", "--scenarios", Paths.scenarios, "--pid-file", pidFile,
                                         "--log-file", folder.path + "/mishap.log"], timeout: .seconds(15))
        #expect(start.status == 1, "\(start)")
        #expect(start.standardError.contains("cannot write the pid file \(pidFile)"), "\(start)")
        #expect(!start.standardOutput.contains("running at"), "\(start)")
        try await Task.sleep(for: .milliseconds(300))
        #expect(Self.servers(pidFile: pidFile).isEmpty, "a server runs without its pid file: \(Self.servers(pidFile: pidFile))")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(leftovers == ["file"], "\(leftovers)")

        // serve in the foreground fails the same way instead of serving without it.
        let serve = try await runMishap(["serve", "--port", "0", "--scenarios", Paths.scenarios, "--pid-file", pidFile],
                                        timeout: .seconds(10))
        #expect(serve.status == 1, "\(serve)")
        #expect(serve.standardError.contains("cannot write the pid file \(pidFile)"), "\(serve)")
        #expect(!serve.standardOutput.contains("listening"), "\(serve)")
    }

    @Test("A pid file naming a live process called mishap-other: status and stop say 'not a mishap server', and stop does not signal it", arguments: [
        true,  // the pid and the URL, as pid files are written now
        false,  // just the pid, as in older pid files
    ])
    func pidFileOfAProcessNamedLikeMishap(withURL: Bool) async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let pidFile = folder.path + "/mishap.pid"
        let impostor = folder.path + "/mishap-other"
        try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: impostor)
        let other = try ChildProcess(impostor, ["60"])
        defer { other.kill() }
        try "\(other.pid)\n\(withURL ? "http://127.0.0.1:9\n" : "")".write(toFile: pidFile, atomically: true, encoding: .utf8)

        // Nothing else may serve on 8080 meanwhile: status would find it there.
        let status = try await DefaultPortLock.exclusive { try await runMishap(["status", "--pid-file", pidFile]) }
        #expect(status.status == 1, "\(status)")
        #expect(status.standardOutput.contains("not a mishap server"), "\(status)")
        #expect(!status.standardOutput.contains("is running"), "\(status)")

        let stop = try await runMishap(["stop", "--pid-file", pidFile, "--timeout", "2"])
        #expect(stop.status == 1, "\(stop)")
        #expect((stop.standardOutput + stop.standardError).contains("process \(other.pid)"), "\(stop)")
        #expect((stop.standardOutput + stop.standardError).contains("not a mishap server"), "\(stop)")
        #expect(!(stop.standardOutput + stop.standardError).contains("gone"), "\(stop)")
        try await Task.sleep(for: .milliseconds(200))
        #expect(other.isRunning, "stop ended a process that is not a mishap server")
        #expect(!Self.hasPendingSIGTERM(other.pid), "stop sent SIGTERM to a process that is not a mishap server")
    }

    @Test("An older pid file of just a pid whose process is gone is stale: status exits 1, stop removes it, start replaces it")
    func stalePidOnlyFile() async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let pidFile = folder.path + "/mishap.pid"
        defer { Self.killServers(pidFile: pidFile) }
        let gone = try ChildProcess("/bin/true", [])
        #expect(await gone.waitForExit(timeout: .seconds(10)))
        try "\(gone.pid)\n".write(toFile: pidFile, atomically: true, encoding: .utf8)

        // Nothing else may serve on 8080 meanwhile: status would find it there.
        let status = try await DefaultPortLock.exclusive { try await runMishap(["status", "--pid-file", pidFile]) }
        #expect(status.status == 1, "\(status)")
        #expect(status.standardOutput.contains("stale pid file \(pidFile): process \(gone.pid) is gone"), "\(status)")
        let stop = try await runMishap(["stop", "--pid-file", pidFile])
        #expect(stop.status == 0, "\(stop)")
        #expect(!FileManager.default.fileExists(atPath: pidFile))

        try "\(gone.pid)\n".write(toFile: pidFile, atomically: true, encoding: .utf8)
        let start = try await runMishap(["start", "--port", "0", "--scenarios", Paths.scenarios, "--pid-file", pidFile,
                                         "--log-file", folder.path + "/mishap.log"], timeout: .seconds(15))
        #expect(start.status == 0, "\(start)")
        #expect(start.standardOutput.contains("replacing a stale pid file (process \(gone.pid) is gone)"), "\(start)")
        let (url, pid) = try #require(Self.started(start.standardOutput), "\(start)")
        #expect(Self.read(pidFile) == "\(pid)\n\(url)\n")
        let stopped = try await runMishap(["stop", "--pid-file", pidFile])
        #expect(stopped.status == 0, "\(stopped)")
        #expect(!Self.isAlive(pid))
    }
}
