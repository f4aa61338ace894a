import Foundation
import MishapTestSupport
import Testing

/// `mishap serve --admin-port` and `mishap down` against a running server: the serving port goes
/// down (curl exits 7) while the admin port answers, `status` and `down` find the admin port
/// through the pid file, `--end` brings the port back, and it comes back by itself; without an
/// admin port, `POST /__mishap/down` is refused with 409 saying why.
@Suite("mishap down", .onBlockingThreads)
struct DownCommandTests {
    /// curl's exit status for a GET of `url`.
    static func curlStatus(_ url: String) async throws -> Int32? {
        try await run("/usr/bin/env", ["curl", "-sS", "-o", "/dev/null", "--max-time", "5", url]).status
    }

    /// The admin port from the pid file's third line, once the server has written it.
    static func adminPort(pidFile: String) async -> UInt16? {
        var port: UInt16?
        _ = await eventually(within: .seconds(10), every: .milliseconds(50)) {
            let lines = ((try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? "").split(separator: "\n")
            port = lines.count > 2 ? lines[2].split(separator: ":").last.flatMap { UInt16($0) } : nil
            return port != nil
        }
        return port
    }

    @Test func theServingPortGoesDownWhileTheAdminPortAnswers() async throws {
        let folder = try TemporaryFolder()
        let pidFile = folder.path + "/mishap.pid"
        let (server, port) = try await ServeTests.startServer(
            ["serve", "--port", "0", "--admin-port", "0", "--pid-file", pidFile, "--scenarios", Paths.scenarios, "--threads", "2"])
        defer { server.kill() }
        let adminPort = try #require(await Self.adminPort(pidFile: pidFile), "no admin URL in the pid file")
        #expect(adminPort != port)
        let serving = "http://127.0.0.1:\(port)/isUserNameAvailable?userName=abcdef"
        #expect(try await Self.curlStatus(serving) == 0)
        // The admin port serves the admin API only.
        #expect(DaemonTests.fetch(adminPort, "/__mishap/health")?.status == 200)
        #expect(DaemonTests.fetch(adminPort, "/isUserNameAvailable?userName=abcdef")?.status == 404)

        let down = try await runMishap(["down", "--pid-file", pidFile, "--for", "30s"])
        #expect(down.status == 0, "\(down)")
        #expect(down.standardOutput.contains(#""down":true"#) && down.standardOutput.contains(#""adminPort":\#(adminPort)"#),
                "\(down.standardOutput)")
        #expect(try await Self.curlStatus(serving) == 7, "curl's exit status while down")
        let status = try await runMishap(["status", "--pid-file", pidFile])
        #expect(status.status == 0, "status while down: \(status)")
        let shown = try await runMishap(["down", "--pid-file", pidFile])
        #expect(shown.status == 0 && shown.standardOutput.contains(#""down":true"#), "\(shown)")
        #expect(try DaemonTests.admin(adminPort, "down").json["down"] as? Bool == true)

        let ended = try await runMishap(["down", "--pid-file", pidFile, "--end"])
        #expect(ended.status == 0 && ended.standardOutput.contains(#""down":false"#), "\(ended)")
        #expect(try await Self.curlStatus(serving) == 0)

        // Over HTTP, with a bare number of seconds, back by itself.
        let posted = DaemonTests.fetch(adminPort, "/__mishap/down?for=1", method: "POST")
        #expect(posted?.status == 200, "\(String(describing: posted))")
        #expect(try await Self.curlStatus(serving) == 7)
        let back = try await eventually(within: .seconds(8), every: .milliseconds(100)) {
            try await Self.curlStatus(serving) == 0
        }
        #expect(back, "not back after the second")
        #expect(DaemonTests.fetch(adminPort, "/__mishap/down?for=2d", method: "POST")?.status == 400)
        #expect(DaemonTests.fetch(adminPort, "/__mishap/down", method: "POST")?.status == 400)
    }

    @Test func anHTTPSServingPortGoesDownToo() async throws {
        // --port off: HTTPS is the serving port, its connections handed to libmicrohttpd's TLS.
        let folder = try TemporaryFolder()
        let pidFile = folder.path + "/mishap.pid"
        let server = try ChildProcess.mishap(
            ["serve", "--port", "off", "--tls-port", "0", "--admin-port", "0", "--pid-file", pidFile,
             "--scenarios", Paths.scenarios, "--threads", "2", "--no-tls-catalogue"],
            environment: ["MISHAP_TLS_DIR": folder.path + "/tls"])
        defer { server.kill() }
        _ = try #require(await Self.adminPort(pidFile: pidFile), "no admin URL in the pid file: \(server.standardError)")
        let lines = try String(contentsOfFile: pidFile, encoding: .utf8).split(separator: "\n")
        let health = String(lines[1]) + "/__mishap/health"
        #expect(health.hasPrefix("https://"), "\(lines)")
        func curl() async throws -> Int32? {
            try await run("/usr/bin/env", ["curl", "-sSk", "-o", "/dev/null", "--max-time", "5", health]).status
        }
        #expect(try await curl() == 0)
        let down = try await runMishap(["down", "--pid-file", pidFile, "--for", "30s"])
        #expect(down.status == 0, "\(down)")
        #expect(try await curl() == 7)
        let ended = try await runMishap(["down", "--pid-file", pidFile, "--end"])
        #expect(ended.status == 0, "\(ended)")
        #expect(try await curl() == 0)
    }

    @Test func withoutAnAdminPortGoingDownIsRefused() async throws {
        let (server, port) = try await ServeTests.startServer(["serve", "--port", "0", "--scenarios", Paths.scenarios, "--threads", "2"])
        defer { server.kill() }
        let refused = try #require(DaemonTests.fetch(port, "/__mishap/down?for=5s", method: "POST"))
        #expect(refused.status == 409)
        #expect(refused.body.contains("--admin-port"), "\(refused.body)")
        #expect(try DaemonTests.admin(port, "down").json["down"] as? Bool == false)
        let command = try await runMishap(["down", "--url", "http://127.0.0.1:\(port)", "--for", "5s"])
        #expect(command.status == 1 && command.standardError.contains("409"), "\(command)")
        #expect(try await Self.curlStatus("http://127.0.0.1:\(port)/__mishap/health") == 0, "still serving")
    }

    @Test(arguments: [
        (["serve", "--admin-port", "70000"], "--admin-port must be from 0 to 65535"),
        (["serve", "--port", "9090", "--admin-port", "9090"], "--admin-port must differ from --port"),
        (["down", "--for", "0"], "--for must be from 0.001 to 86400 seconds"),
        (["down", "--for", "1s", "--end"], "give --for or --end, not both"),
    ])
    func badArgumentsGetUsage(arguments: [String], message: String) async throws {
        let result = try await runMishap(arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.standardError.contains(message), "\(result.standardError)")
    }
}
