import Foundation
import MishapTestSupport
import Testing

/// `mishap force` and `mishap routes --url` against a running `mishap serve`.
@Suite("mishap force and routes --url", .onBlockingThreads)
struct ForceCommandTests {
    static let login = #"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#

    static func loginStatus(_ port: UInt16, session: String? = nil) -> Int? {
        DaemonTests.fetch(port, "/login", method: "POST",
                          headers: ["Content-Type: application/json"] + (session.map { ["X-Mishap-Session: \($0)"] } ?? []),
                          body: login)?.status
    }

    @Test func forceTheNextRequestsThenList() async throws {
        let (server, port) = try await ServeTests.startServer(["--port", "0", "--scenarios", Paths.scenarios])
        defer { server.kill() }
        let url = "http://127.0.0.1:\(port)"

        let forced = try await runMishap(["force", "POST /login", "maintenance!", "--times", "2", "--url", url])
        #expect(forced.status == 1, "maintenance! is an alias of the username endpoint, not of login: \(forced)")
        #expect(forced.standardError.contains("no rule 'maintenance!' in POST /login"), "\(forced.standardError)")

        let two = try await runMishap(["force", "post", "/login", "SERVERERROR", "--times", "2", "--url", url])
        #expect(two.status == 0, "\(two)")
        #expect(two.standardOutput.contains(#""rules":["serverError"]"#) && two.standardOutput.contains(#""times":2"#), "\(two.standardOutput)")
        #expect(Self.loginStatus(port) == 500)
        #expect(Self.loginStatus(port, session: "any") == 500, "without --session, every request")
        #expect(Self.loginStatus(port) == 200, "two answers, then gone")

        let mine = try await runMishap(["force", "POST /login", "maintenance", "--session", "s1", "--for", "30s", "--url", url])
        #expect(mine.status == 0, "\(mine)")
        #expect(Self.loginStatus(port, session: "s1") == 500)
        #expect(Self.loginStatus(port) == 200)

        let routes = try await runMishap(["routes", "--url", url])
        #expect(routes.status == 0, "\(routes)")
        #expect(routes.standardOutput.contains("GET /isUserNameAvailable  ("), "\(routes.standardOutput)")
        #expect(routes.standardOutput.contains("Rules added at runtime"), "\(routes.standardOutput)")
        #expect(routes.standardOutput.contains("POST /login answers with its rule maintenance  (session s1, "), "\(routes.standardOutput)")
    }

    @Test(arguments: [
        (["force", "maintenance"], "give the endpoint and the rule"),
        (["force", "POST /login", "maintenance", "--times", "0"], "--times must be 1 or more"),
        (["force", "POST /login", "maintenance", "--for", "soon"],
         "--for must be from 0.001 to 86400 seconds (a number of seconds, or with a unit: 500ms, 30s, 2m); not 'soon'"),
        (["force", "POST /login", "maintenance", "--for", "0"], "--for must be from 0.001 to 86400 seconds"),
    ])
    func badArgumentsGetUsage(arguments: [String], message: String) async throws {
        let result = try await runMishap(arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.standardError.contains(message) && result.standardError.contains("Usage: mishap force"), "\(result.standardError)")
    }

    @Test func routesOfNoServerIsAClearFailure() async throws {
        let result = try await runMishap(["routes", "--url", "http://127.0.0.1:1"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("nothing accepts connections"), "\(result.standardError)")
    }
}
