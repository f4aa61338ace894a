import Foundation
import MishapTestSupport
import Testing

/// `mishap network` against a running `mishap serve`: sets a preset and a JSON profile for a
/// session (its answers wait, another session's do not), shows it, `--for` ends it by itself,
/// `--off` removes it; a bad profile is the server's 422; `serve --network` applies a default;
/// bad arguments get usage naming the presets.
@Suite("mishap network", .onBlockingThreads)
struct NetworkCommandTests {
    static func seconds(_ port: UInt16, session: String) -> Double {
        let start = ContinuousClock.now
        #expect(DaemonTests.fetch(port, "/isUserNameAvailable?userName=alice", headers: ["X-Mishap-Session: \(session)"])?.status == 200)
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    @Test func setsShowsAndRemovesASessionsNetwork() async throws {
        let (server, port) = try await ServeTests.startServer(["--port", "0", "--scenarios", Paths.scenarios])
        defer { server.kill() }
        let url = "http://127.0.0.1:\(port)"

        let none = try await runMishap(["network", "--url", url, "--session", "n1"])
        #expect(none.status == 0 && none.standardOutput == #"{"session":"n1","network":null}"# + "\n", "\(none)")

        let edge = try await runMishap(["network", "--url", url, "--session", "n1", "edge"])
        #expect(edge.status == 0 && edge.standardOutput.contains(#""name":"edge","latency":"840ms""#), "\(edge)")
        #expect(Self.seconds(port, session: "n1") >= 0.8, "Edge's 840 ms")
        _ = try await runMishap(["network", "--url", url, "--session", "n1", "high-latency"])
        let shaped = Self.seconds(port, session: "n1"), unshaped = Self.seconds(port, session: "n2")
        #expect(shaped >= 2.9, "High Latency's 3 s")
        #expect(unshaped + 1 < shaped, "another session is not slowed: \(unshaped)")

        let custom = try await runMishap(["network", "--url", url, "--session", "n1", "--for", "1s", #"{"latency": "300ms"}"#])
        #expect(custom.status == 0 && custom.standardOutput.contains(#""name":"custom","latency":"300ms""#), "\(custom)")
        #expect(custom.standardOutput.contains(#""expiresInMs":"#) && !custom.standardOutput.contains(#""expiresInMs":null"#))
        try await Task.sleep(for: .milliseconds(1200))
        let ended = try await runMishap(["network", "--url", url, "--session", "n1"])
        #expect(ended.standardOutput.contains(#""network":null"#), "\(ended)")

        let bad = try await runMishap(["network", "--url", url, "--session", "n1", #"{"latency": "soon"}"#])
        #expect(bad.status == 1 && bad.standardError.contains("422") && bad.standardError.contains("latency"), "\(bad)")

        _ = try await runMishap(["network", "--url", url, "--session", "n1", "3g"])
        let off = try await runMishap(["network", "--url", url, "--session", "n1", "--off"])
        #expect(off.status == 0 && off.standardOutput == #"{"session":"n1","network":null}"# + "\n", "\(off)")
    }

    @Test func serveTakesADefaultNetwork() async throws {
        let (server, port) = try await ServeTests.startServer(["--port", "0", "--scenarios", Paths.scenarios, "--network", "High Latency"])
        defer { server.kill() }
        #expect(Self.seconds(port, session: "any") >= 2.9, "the default's 3 s")
        let journal = try DaemonTests.admin(port, "requests?session=any").json
        let entry = try #require((journal["requests"] as? [[String: Any]])?.last)
        #expect((entry["network"] as? [String: Any])?["profile"] as? String == "high-latency")
    }

    @Test(arguments: [
        (["network"], "Missing expected argument '--session <id>'"),
        (["network", "--session", ""], "--session must not be empty"),
        (["network", "--session", "s", "5g"], "'5g' is not a preset (none, wifi, lte, dsl, 3g, edge"),
        (["network", "--session", "s", "--off", "edge"], "--off removes the session's profile; give it alone"),
        (["network", "--session", "s", "--for", "30s"], "--for goes with a profile"),
        (["network", "--session", "s", "--for", "0", "edge"], "--for must be from 0.001 to 86400 seconds"),
    ])
    func badArgumentsGetUsage(arguments: [String], message: String) async throws {
        let result = try await runMishap(arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.standardError.contains(message) && result.standardError.contains("Usage: mishap network"), "\(result.standardError)")
    }

    @Test func aBadPresetOnServeIsAUsageError() async throws {
        let result = try await runMishap(["serve", "--network", "5g", "--scenarios", Paths.scenarios])
        #expect(result.status == 64, "\(result)")
        #expect(result.standardError.contains("--network takes a preset: none, wifi, lte, dsl, 3g, edge, very-bad-network"), "\(result.standardError)")
    }
}
