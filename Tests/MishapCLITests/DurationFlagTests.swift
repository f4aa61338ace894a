import Foundation
import MishapTestSupport
import Testing

/// Every duration flag reads a bare number as seconds and takes a unit too (`500ms`, `30s`,
/// `2m`): `mishap state --for 30` is 30 s, as `mishap force --for 30` is, and the flags of
/// `serve`, `start` and `stop` take units; the help of each says so.
@Suite("duration flags", .onBlockingThreads)
struct DurationFlagTests {
    /// The milliseconds left of `name` in a state answer printed by `mishap state`.
    static func expiresInMs(_ output: String, _ name: String) -> Int? {
        let object = (try? JSONSerialization.jsonObject(with: Data(output.utf8))) as? [String: Any]
        return ((object?["state"] as? [String: Any])?[name] as? [String: Any])?["expiresInMs"] as? Int
    }

    @Test("mishap state --for 30 lasts 30 s, as mishap force --for 30 does; units are read as given")
    func stateAndForceAgree() async throws {
        let (server, port) = try await ServeTests.startServer(["--port", "0", "--scenarios", Paths.scenarios, "--watch", "off"])
        defer { server.kill() }
        let url = "http://127.0.0.1:\(port)"

        let bare = try await runMishap(["state", "--url", url, "searchOutage=true", "--for", "30"])
        #expect(bare.status == 0, "\(bare)")
        let left = try #require(Self.expiresInMs(bare.standardOutput, "searchOutage"), "\(bare.standardOutput)")
        #expect(left > 25_000 && left <= 30_000, "\(bare.standardOutput)")
        #expect(DaemonTests.fetch(port, "/search?q=x")?.status == 503)

        let unit = try await runMishap(["state", "--url", url, "searchOutage=true", "--for", "1500ms"])
        let short = try #require(Self.expiresInMs(unit.standardOutput, "searchOutage"), "\(unit.standardOutput)")
        #expect(short > 0 && short <= 1500, "\(unit.standardOutput)")

        let forced = try await runMishap(["force", "--url", url, "GET /search", "outage", "--for", "30"])
        #expect(forced.status == 0, "\(forced)")
        let object = try #require((try? JSONSerialization.jsonObject(with: Data(forced.standardOutput.utf8))) as? [String: Any])
        let expires = try #require(object["expiresInMs"] as? Int, "\(forced.standardOutput)")
        #expect(expires > 25_000 && expires <= 30_000, "\(forced.standardOutput)")

        let refused = try await runMishap(["state", "--url", url, "searchOutage=true", "--for", "soon"])
        #expect(refused.status == 64, "\(refused)")
        #expect(refused.standardError.contains("--for must be from 0 to 86400 seconds"), "\(refused.standardError)")
    }

    @Test("serve's duration flags take units; whole seconds where only whole seconds can be kept")
    func serveFlagsTakeUnits() async throws {
        let (server, port) = try await ServeTests.startServer(
            ["--port", "0", "--scenarios", Paths.scenarios, "--watch", "off", "--connection-timeout", "2m",
             "--head-timeout", "10s", "--grace", "1500ms", "--upstream-timeout", "2.5s"])
        defer { server.kill() }
        #expect(DaemonTests.fetch(port, "/search?q=x")?.status == 200)

        let fractional = try await runMishap(["serve", "--connection-timeout", "1500ms"])
        #expect(fractional.status == 64, "\(fractional)")
        #expect(fractional.standardError.contains("--connection-timeout must be from 0 to 86400 seconds, whole (30, or with a unit: 30s, 2m); not '1500ms'"),
                "\(fractional.standardError)")
        let tooLong = try await runMishap(["serve", "--grace", "25h"])
        #expect(tooLong.status == 64 && tooLong.standardError.contains("--grace must be from 0 to 86400 seconds"), "\(tooLong)")
    }

    @Test("start and stop take units")
    func startAndStopTakeUnits() async throws {
        let folder = try TemporaryFolder()
        let pidFile = folder.path + "/mishap.pid"
        let started = try await runMishap(["start", "--port", "0", "--scenarios", Paths.scenarios, "--pid-file", pidFile,
                                           "--log-file", folder.path + "/mishap.log", "--timeout", "1m", "--grace", "2s"])
        #expect(started.status == 0, "\(started)")
        let stopped = try await runMishap(["stop", "--pid-file", pidFile, "--timeout", "30s"])
        #expect(stopped.status == 0, "\(stopped)")
    }

    @Test(arguments: [["state"], ["force"], ["serve"], ["start"], ["stop"], ["record"]])
    func helpSaysSeconds(command: [String]) async throws {
        let help = try await runMishap(command + ["--help"])
        // The help is wrapped to the terminal's width: compared with its spaces and breaks as one.
        let words = help.standardOutput.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        #expect(words.contains("Seconds, or with a unit: 500ms, 30s, 2m."), "\(help.standardOutput)")
    }
}
