import Foundation
import MishapTestSupport
import Testing

/// `mishap clock` against a running `mishap serve`: shows a session's settings, moves its clock
/// (its search quota window passes, another session's does not), scales the Retry-After it is
/// sent, resets and ends them; bad arguments get usage, a missing server exits 1.
@Suite("mishap clock", .onBlockingThreads)
struct ClockCommandTests {
    static func search(_ port: UInt16, session: String) -> Int? {
        DaemonTests.fetch(port, "/search?q=swift", headers: ["X-Mishap-Session: \(session)"])?.status
    }

    @Test func movesAndScalesASessionsTime() async throws {
        let (server, port) = try await ServeTests.startServer(["--port", "0", "--scenarios", Paths.scenarios])
        defer { server.kill() }
        let url = "http://127.0.0.1:\(port)"

        let shown = try await runMishap(["clock", "--url", url, "--session", "cli 1"])
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.standardOutput == #"{"session":"cli 1","retryAfterScale":null,"clockOffsetMs":0}"# + "\n", "\(shown.standardOutput)")

        for session in ["cli 1", "cli 2"] {
            for _ in 1...5 { #expect(Self.search(port, session: session) == 200) }
            #expect(Self.search(port, session: session) == 429)
        }
        let moved = try await runMishap(["clock", "--url", url, "--session", "cli 1", "--advance", "10s"])
        #expect(moved.status == 0, "\(moved)")
        #expect(moved.standardOutput.contains(#""clockOffsetMs":10000"#), "\(moved.standardOutput)")
        #expect(Self.search(port, session: "cli 1") == 200, "the session's window passed")
        #expect(Self.search(port, session: "cli 2") == 429, "another session's did not")
        #expect(try DaemonTests.admin(port, "clock?session=cli%202").json["offsetMs"] as? Int == 0)

        let scaled = try await runMishap(["clock", "--url", url, "--session", "cli 1", "--retry-after-scale", "0.01"])
        #expect(scaled.status == 0, "\(scaled)")
        #expect(scaled.standardOutput.contains(#""retryAfterScale":0.01,"clockOffsetMs":10000"#), "\(scaled.standardOutput)")
        let maintenance = DaemonTests.fetch(port, "/isUserNameAvailable?userName=maintenance!", headers: ["X-Mishap-Session: cli 1"])
        #expect(maintenance?.status == 500 && maintenance?.headers["retry-after"] == "1", "\(String(describing: maintenance))")
        let unscaled = DaemonTests.fetch(port, "/isUserNameAvailable?userName=maintenance!", headers: ["X-Mishap-Session: cli 2"])
        #expect(unscaled?.headers["retry-after"] == "17")

        let reset = try await runMishap(["clock", "--url", url, "--session", "cli 1", "--reset"])
        #expect(reset.status == 0 && reset.standardOutput.contains(#""retryAfterScale":0.01,"clockOffsetMs":0"#), "\(reset)")
        let ended = try await runMishap(["clock", "--url", url, "--session", "cli 1", "--end"])
        #expect(ended.status == 0 && ended.standardOutput.contains(#""retryAfterScale":null,"clockOffsetMs":0"#), "\(ended)")
    }

    @Test(arguments: [
        (["clock"], "Missing expected argument '--session <id>'"),
        (["clock", "--session", ""], "--session must not be empty"),
        (["clock", "--session", "s", "--advance", "0"], "--advance must be from 0.001 to 86400 seconds"),
        (["clock", "--session", "s", "--advance", "1s", "--reset"], "give --advance or --reset, not both"),
        (["clock", "--session", "s", "--retry-after-scale", "0"], "--retry-after-scale must be over 0 and at most 1"),
        (["clock", "--session", "s", "--retry-after-scale", "2"], "--retry-after-scale must be over 0 and at most 1"),
        (["clock", "--session", "s", "--end", "--reset"], "--end ends every setting of the session; give it alone"),
    ])
    func badArgumentsGetUsage(arguments: [String], message: String) async throws {
        let result = try await runMishap(arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.standardError.contains(message) && result.standardError.contains("Usage: mishap clock"), "\(result.standardError)")
    }

    @Test func noServerIsAClearFailure() async throws {
        let result = try await runMishap(["clock", "--url", "http://127.0.0.1:1", "--session", "s"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("nothing accepts connections at http://127.0.0.1:1"), "\(result.standardError)")
    }
}
