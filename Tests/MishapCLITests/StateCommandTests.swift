import Foundation
import MishapTestSupport
import Testing

/// `mishap state` against a running `mishap serve`: shows and sets values, for a session or
/// for requests without one, for good or for a while; refusals exit 1 with the server's reason,
/// bad arguments get usage.
@Suite("mishap state", .onBlockingThreads)
struct StateCommandTests {
    @Test func showsAndSetsValues() async throws {
        let (server, port) = try await ServeTests.startServer(["--port", "0", "--scenarios", Paths.scenarios])
        defer { server.kill() }
        let url = "http://127.0.0.1:\(port)"

        let set = try await runMishap(["state", "--url", url, "--session", "cli 1", "refreshFailure=500", "meCalls=3"])
        #expect(set.status == 0, "\(set)")
        #expect(set.standardOutput.contains(#""session":"cli 1""#), "\(set.standardOutput)")
        #expect(set.standardOutput.contains(#""refreshFailure":{"value":"500""#), "\(set.standardOutput)")
        #expect(set.standardOutput.contains(#""meCalls":{"value":3,"#), "\(set.standardOutput)")
        // The session's /me now finds its token used up; other sessions are untouched.
        let state = try DaemonTests.admin(port, "state?session=cli%201")
        #expect(((state.json["state"] as? [String: Any])?["meCalls"] as? [String: Any])?["value"] as? Int == 3)
        #expect(((try DaemonTests.admin(port, "state").json["state"] as? [String: Any])?["meCalls"] as? [String: Any])?["value"] as? Int == 0)

        // An outage for requests without a session, for 1 s.
        let outage = try await runMishap(["state", "--url", url, "searchOutage=true", "--for", "1s"])
        #expect(outage.status == 0, "\(outage)")
        #expect(DaemonTests.fetch(port, "/search?q=x")?.status == 503)
        try await Task.sleep(for: .milliseconds(1200))
        #expect(DaemonTests.fetch(port, "/search?q=x")?.status == 200)

        let shown = try await runMishap(["state", "--url", url])
        #expect(shown.status == 0 && shown.standardOutput.contains(#""session":null"#), "\(shown)")

        let refused = try await runMishap(["state", "--url", url, "searchOutage=maybe"])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("the server answered 400") && refused.standardError.contains("'searchOutage' is a boolean"),
                "\(refused.standardError)")
        let unknown = try await runMishap(["state", "--url", url, "serchOutage=true"])
        #expect(unknown.status == 1 && unknown.standardError.contains("did you mean 'searchOutage'?"), "\(unknown.standardError)")
    }

    @Test(arguments: [
        (["state", "outage"], "'outage' must be NAME=VALUE"),
        (["state", "--for", "3s"], "--for needs values to set"),
        (["state", "--session", "", "a=1"], "--session must not be empty"),
    ])
    func badArgumentsGetUsage(arguments: [String], message: String) async throws {
        let result = try await runMishap(arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.standardError.contains(message) && result.standardError.contains("Usage: mishap state"), "\(result.standardError)")
    }

    @Test func noServerIsAClearFailure() async throws {
        let result = try await runMishap(["state", "--url", "http://127.0.0.1:1", "a=1"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("nothing accepts connections at http://127.0.0.1:1"), "\(result.standardError)")
    }
}
