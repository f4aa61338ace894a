import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `mishap status` says what is true: a server started with `serve` (no pid file) is found
/// where `state` and `force` find it; a server whose admin API wants a token (401) is serving;
/// a server on HTTPS is checked over HTTPS.
@Suite("mishap status", .onBlockingThreads)
struct StatusTests {
    /// Starts `mishap serve` on `port` (8080: where `status`, `state` and `force` look without
    /// a pid file), waiting a while for the port when another process holds it for a moment
    /// (`ChildProcess.serving`).
    static func serve(_ arguments: [String], environment: [String: String] = [:]) async throws -> (ChildProcess, String) {
        let (server, url, _) = try await ChildProcess.serving(arguments, environment: environment, attempts: 20)
        return (server, url)
    }

    @Test("without a pid file, a server started with serve on the default port is found, as state finds it")
    func serverWithoutAPidFile() async throws {
        try await DefaultPortLock.exclusive { try await Self.checkServerWithoutAPidFile() }
    }

    /// `serverWithoutAPidFile`, while no other test asks what serves on 8080.
    static func checkServerWithoutAPidFile() async throws {
        let folder = try TemporaryFolder()
        let pidFile = folder.path + "/mishap.pid"
        let before = try await runMishap(["status", "--pid-file", pidFile])
        #expect(before.status == 1, "\(before)")
        #expect(before.standardOutput.hasPrefix("mishap is not running (no pid file at \(pidFile); nothing serves at http://127.0.0.1:8080"),
                "\(before)")

        let (server, url) = try await serve(["serve", "--port", "8080", "--scenarios", Paths.scenarios, "--watch", "off"])
        defer { server.kill() }
        #expect(url == "http://127.0.0.1:8080")
        let state = try await runMishap(["state", "--pid-file", pidFile])
        #expect(state.status == 0, "state reaches the server: \(state)")
        let status = try await runMishap(["status", "--pid-file", pidFile])
        #expect(status.status == 0, "\(status)")
        #expect(status.standardOutput == "mishap is serving at http://127.0.0.1:8080 (no pid file at \(pidFile): not started with 'mishap start')\n",
                "\(status)")
    }

    @Test("a server that answers 401 (a token is needed) or takes the token is serving; a wrong one is said")
    func adminToken() async throws {
        let (server, url) = try await Self.serve(["serve", "--port", "0", "--scenarios", Paths.scenarios, "--watch", "off",
                                                  "--admin-token", "s3cret"])
        defer { server.kill() }
        let without = try await runMishap(["status", "--url", url])
        #expect(without.status == 0, "\(without)")
        #expect(without.standardOutput
            == "mishap is serving at \(url); its admin API needs the admin token (--admin-token or MISHAP_ADMIN_TOKEN) to say more\n",
            "\(without)")
        let wrong = try await runMishap(["status", "--url", url, "--admin-token", "other"])
        #expect(wrong.status == 0 && wrong.standardOutput == "mishap is serving at \(url), but its admin API refused the admin token given\n",
                "\(wrong)")
        let right = try await runMishap(["status", "--url", url], environment: ["MISHAP_ADMIN_TOKEN": "s3cret"])
        #expect(right.status == 0 && right.standardOutput == "mishap is serving at \(url)\n", "\(right)")
    }

    @Test("a server on HTTPS only is checked over HTTPS, trusting the local authority")
    func https() async throws {
        let folder = try TemporaryFolder()
        let environment = ["MISHAP_TLS_DIR": folder.path + "/tls"]
        let pidFile = folder.path + "/mishap.pid"
        let (server, url) = try await Self.serve(["serve", "--port", "off", "--tls-port", "0", "--no-tls-catalogue",
                                                  "--scenarios", Paths.scenarios, "--watch", "off", "--pid-file", pidFile],
                                                 environment: environment)
        defer { server.kill() }
        #expect(url.hasPrefix("https://127.0.0.1:"), "\(url)")
        // A health check gives up after 3 s; the full command-line suite on 2 cores once kept a
        // first TLS handshake longer than that. Only such a timeout is tried again, twice.
        var status = try await runMishap(["status", "--url", url], environment: environment)
        for _ in 1...2 where status.standardOutput.contains("Operation timed out") {
            status = try await runMishap(["status", "--url", url], environment: environment)
        }
        #expect(status.status == 0 && status.standardOutput == "mishap is serving at \(url)\n", "\(status)")
        let byPidFile = try await runMishap(["status", "--pid-file", pidFile], environment: environment)
        #expect(byPidFile.status == 0 && byPidFile.standardOutput.hasPrefix("mishap is running at \(url) (pid "), "\(byPidFile)")

        // Not trusted: another authority's folder. Said, and not as nothing serving.
        let untrusted = try await runMishap(["status", "--url", url], environment: ["MISHAP_TLS_DIR": folder.path + "/none"])
        #expect(untrusted.status == 1, "\(untrusted)")
        #expect(untrusted.standardOutput.contains("mishap is not serving at \(url)") && untrusted.standardOutput.contains("trusting"),
                "\(untrusted)")
    }

    @Test("an answer not as mishap's health endpoint gives (here --no-admin: the path goes to the scenarios) is not taken for one")
    func somethingElse() async throws {
        let (server, url) = try await Self.serve(["serve", "--port", "0", "--scenarios", Paths.scenarios, "--watch", "off", "--no-admin"])
        defer { server.kill() }
        let status = try await runMishap(["status", "--url", url])
        #expect(status.status == 1, "\(status)")
        #expect(status.standardOutput == "mishap is not serving at \(url): \(url)/__mishap/health answered 404, not as mishap does\n",
                "\(status)")
    }

    @Test("MISHAP_PID_FILE: serve writes its pid file there unasked, and status finds it on its port; a server that stops answering is said")
    func pidFileFromTheEnvironment() async throws {
        let folder = try TemporaryFolder()
        let environment = ["MISHAP_PID_FILE": folder.path + "/run/mishap.pid"]
        try FileManager.default.createDirectory(atPath: folder.path + "/run", withIntermediateDirectories: true)
        let (server, url) = try await Self.serve(["serve", "--port", "0", "--scenarios", Paths.scenarios, "--watch", "off"],
                                                 environment: environment)
        defer { server.kill() }
        let status = try await runMishap(["status"], environment: environment)
        #expect(status.status == 0 && status.standardOutput == "mishap is running at \(url) (pid \(server.pid))\n", "\(status)")
        let state = try await runMishap(["state"], environment: environment)
        #expect(state.status == 0, "state finds it too: \(state)")

        // Stopped (SIGSTOP): the process holds the pid file, but nothing answers.
        server.signal(SIGSTOP)
        defer { server.signal(SIGCONT) }
        let stuck = try await runMishap(["status"], environment: environment)
        #expect(stuck.status == 1, "\(stuck)")
        #expect(stuck.standardOutput.hasPrefix("mishap runs (pid \(server.pid)) but does not answer at \(url): "), "\(stuck)")
    }
}
