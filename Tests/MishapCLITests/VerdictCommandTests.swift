import Foundation
import MishapTestSupport
import Testing

/// `mishap verdict`: the server's verdict for a person, as JSON and as JUnit XML, read from a
/// server over a socket: canned answers (a scripted server) for the printing and the XML, the
/// real `mishap serve` for the round trip.
@Suite("mishap verdict", .onBlockingThreads)
struct VerdictCommandTests {
    /// A failing verdict as the contract writes it, its texts full of what XML must escape.
    static let failing = #"""
        {"session":"s 1","passed":false,"endpoint":"GET /isUserNameAvailable","attempts":7,
         "grouping":"attempts are the same request when method, path with query and body are the same, in the same session",
         "limits":{"maxAttempts":3,"giveUpWithinMs":500},
         "checks":[
          {"name":"retryAfter","passed":false,"summary":"came back 14 s early after Retry-After: 17 <\"twice\"> & 'once'",
           "details":{"violations":1},
           "evidence":[{"id":3,"at":"2026-11-27T16:00:00.123Z","request":"GET /isUserNameAvailable?userName=maintenance&x=<1>",
                        "answer":"500","rule":"maintenance","waitedMs":3004,"note":"Retry-After: 17; came back 14 s early"},
                       {"id":4,"at":"2026-11-27T16:00:03.127Z","request":"GET /isUserNameAvailable?userName=maintenance&x=<1>",
                        "answer":"reset","rule":null}]},
          {"name":"backoff","passed":true,"summary":"waits grew by 2.0 each time","evidence":[]},
          {"name":"attemptBudget","passed":true,"summary":"at most 3 attempts","evidence":[]},
          {"name":"unsafeRetry","passed":null,"summary":"no POST or PATCH met a failure","evidence":[]},
          {"name":"clientErrorRetry","passed":null,"summary":"no 4xx\u0001 to judge\nat all","evidence":[]},
          {"name":"oneRefresh","passed":null,"summary":"no 401 invalid_token","evidence":[]},
          {"name":"giveUp","passed":false,"summary":"waited 🐢 forever on a hang","evidence":[
            {"id":9,"at":"2026-11-27T16:00:09.000Z","request":"GET /isUserNameAvailable?userName=timeout","answer":"hang","rule":"timeout","waitedMs":61000}]}
         ]}
        """#

    static let passing = #"""
        {"session":"ok","passed":true,"endpoint":null,"attempts":1,"grouping":"g","limits":{"maxAttempts":5,"giveUpWithinMs":60000},
         "checks":[{"name":"retryAfter","passed":null,"summary":"no Retry-After was sent","evidence":[]},
                   {"name":"backoff","passed":true,"summary":"no repeated attempt","evidence":[]}]}
        """#

    /// A server that answers every request with `status` and `body` as JSON.
    static func canned(_ body: String, status: String = "200 OK") throws -> ScriptedUpstream {
        try ScriptedUpstream(rawHead: "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                             + "Connection: close\r\n\r\n", body: Array(body.utf8))
    }

    @Test("A failed verdict: a line per check, the failed checks' evidence, the overall line, exit 1; the options in the query")
    func failedVerdictForAPerson() async throws {
        let server = try Self.canned(Self.failing)
        let result = try await runMishap(["verdict", "--url", server.url(), "--session", "s 1", "--endpoint", "GET /isUserNameAvailable",
                                          "--max-attempts", "3", "--give-up-within", "500ms"])
        #expect(result.status == 1, "\(result)")
        #expect(server.requests.map(\.target)
                == ["/__mishap/verdict?session=s%201&endpoint=GET%20%2FisUserNameAvailable&maxAttempts=3&giveUpWithin=500ms"])
        let lines = result.standardOutput.components(separatedBy: "\n")
        #expect(lines.first == #"✗ retryAfter        came back 14 s early after Retry-After: 17 <"twice"> & 'once'"#, "\(lines)")
        #expect(lines.contains("      #3 16:00:00.123 GET /isUserNameAvailable?userName=maintenance&x=<1> → 500 (rule maintenance), waited 3.0 s: Retry-After: 17; came back 14 s early"),
                "\(lines)")
        #expect(lines.contains("      #4 16:00:03.127 GET /isUserNameAvailable?userName=maintenance&x=<1> → reset"), "\(lines)")
        #expect(lines.contains("✓ backoff           waits grew by 2.0 each time"), "\(lines)")
        #expect(lines.contains("– unsafeRetry       no POST or PATCH met a failure"), "\(lines)")
        #expect(lines.contains("– clientErrorRetry  no 4xx\u{FFFD} to judge at all"), "a control character is not sent to the terminal: \(lines)")
        #expect(lines.contains("✗ giveUp            waited 🐢 forever on a hang"), "\(lines)")
        #expect(lines.contains("      #9 16:00:09.000 GET /isUserNameAvailable?userName=timeout → hang (rule timeout), waited 61 s"), "\(lines)")
        #expect(lines.contains("FAILED: 2 of 7 checks (retryAfter, giveUp); session s 1, endpoint GET /isUserNameAvailable, 7 attempts"),
                "\(lines)")
        // Evidence is shown for failed checks only.
        #expect(lines.filter { $0.hasPrefix("      #") }.count == 3, "\(lines)")
    }

    @Test("A passing verdict exits 0; --json prints the server's JSON as it is")
    func passingAndJSON() async throws {
        let server = try Self.canned(Self.passing)
        let person = try await runMishap(["verdict", "--url", server.url(), "--session", "ok"])
        #expect(person.status == 0, "\(person)")
        #expect(person.standardOutput.hasSuffix("PASSED: 1 of 2 checks judged, none failed; session ok, 1 attempt\n"), "\(person.standardOutput)")
        let json = try await runMishap(["verdict", "--url", server.url(), "--session", "ok", "--json"])
        #expect(json.status == 0, "\(json)")
        #expect(json.standardOutput == Self.passing + "\n")

        let failing = try Self.canned(Self.failing)
        let failed = try await runMishap(["verdict", "--url", failing.url(), "--json"])
        #expect(failed.status == 1, "--json exits 1 on a failed verdict too: \(failed)")
        #expect(failed.standardOutput == Self.failing + "\n")
        #expect(failing.requests.map(\.target) == ["/__mishap/verdict"], "no session: the requests without one")
    }

    @Test("--junit writes a test case per check: failure and skipped with their messages, escaped so that XML reads them back")
    func junitParses() async throws {
        let folder = try TemporaryFolder()
        let server = try Self.canned(Self.failing)
        let file = folder.path + "/verdict.xml"
        let result = try await runMishap(["verdict", "--url", server.url(), "--session", "s 1", "--junit", file])
        #expect(result.status == 1, "\(result)")
        let document = try XMLTree(contentsOfFile: file)
        let suites = document.root.descendants("testsuite")
        #expect(document.root.name == "testsuites" && suites.count == 1)
        let suite = try #require(suites.first)
        #expect(suite.attributes["tests"] == "7")
        #expect(suite.attributes["failures"] == "2")
        #expect(suite.attributes["skipped"] == "3")
        let cases = document.root.descendants("testcase")
        #expect(cases.compactMap { $0.attributes["name"] }
                == ["retryAfter", "backoff", "attemptBudget", "unsafeRetry", "clientErrorRetry", "oneRefresh", "giveUp"])
        let retryAfter = try #require(cases[0].elements("failure").first)
        #expect(retryAfter.attributes["message"] == #"came back 14 s early after Retry-After: 17 <"twice"> & 'once'"#)
        #expect(retryAfter.text.contains("GET /isUserNameAvailable?userName=maintenance&x=<1> → 500"), "\(retryAfter.text)")
        #expect(cases[1].elements("failure").isEmpty)
        let skipped = try #require(cases[4].elements("skipped").first)
        #expect(skipped.attributes["message"] == "no 4xx\u{FFFD} to judge\nat all",
                "a control character XML cannot hold is replaced; the line break kept")
        #expect(cases[6].elements("failure").first?.attributes["message"] == "waited 🐢 forever on a hang")

    }

    @Test("No verdict: a server without the call, an answer that is not a verdict, nothing listening: exit 1 with the reason")
    func noVerdict() async throws {
        let older = try Self.canned(#"{"error":true,"reason":"no admin endpoint '/__mishap/verdict'"}"#, status: "404 Not Found")
        let missing = try await runMishap(["verdict", "--url", older.url(), "--session", "s"])
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("has no verdict (GET /__mishap/verdict answered 404"), "\(missing.standardError)")

        let strange = try Self.canned(#"{"passed":"yes"}"#)
        let notOne = try await runMishap(["verdict", "--url", strange.url(), "--session", "s"])
        #expect(notOne.status == 1)
        #expect(notOne.standardError.contains(#"the server's answer is not a verdict: {"passed":"yes"}"#), "\(notOne.standardError)")

        let nothing = try await runMishap(["verdict", "--url", "http://127.0.0.1:1", "--session", "s"])
        #expect(nothing.status == 1)
        #expect(nothing.standardError.contains("nothing accepts connections"), "\(nothing.standardError)")
    }

    @Test("Against mishap serve: a client that came back at once after Retry-After: 17 fails retryAfter; one plain request passes")
    func realServer() async throws {
        let (server, port) = try await ServeTests.startServer(["serve", "--port", "0", "--scenarios", Paths.scenarios])
        defer { server.kill() }
        let url = "http://127.0.0.1:\(port)"
        for _ in 0..<2 {
            #expect(DaemonTests.fetch(port, "/__session/hasty/isUserNameAvailable?userName=maintenance")?.status == 500)
        }
        #expect(DaemonTests.fetch(port, "/isUserNameAvailable?userName=patient", headers: ["X-Mishap-Session: calm"])?.status == 200)

        let folder = try TemporaryFolder()
        let junit = folder.path + "/hasty.xml"
        let hasty = try await runMishap(["verdict", "--url", url, "--session", "hasty", "--junit", junit])
        #expect(hasty.status == 1, "\(hasty)")
        let lines = hasty.standardOutput.components(separatedBy: "\n")
        #expect(lines.first?.hasPrefix("✗ retryAfter ") == true, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("      #") && $0.contains(" GET /isUserNameAvailable?userName=maintenance → 500 (rule maintenance), waited ") },
                "\(lines)")
        #expect(lines.contains { $0.hasPrefix("FAILED: 1 of 8 checks (retryAfter); session hasty, ") }, "\(lines)")
        let cases = try XMLTree(contentsOfFile: junit).root.descendants("testcase")
        #expect(cases.count == 8)
        #expect(cases.first { $0.attributes["name"] == "retryAfter" }?.elements("failure").count == 1)

        let calm = try await runMishap(["verdict", "--url", url, "--session", "calm", "--endpoint", "GET /isUserNameAvailable"])
        #expect(calm.status == 0, "\(calm)")
        #expect(calm.standardOutput.contains("\nPASSED: "), "\(calm.standardOutput)")
        #expect(!calm.standardOutput.contains("✗"), "\(calm.standardOutput)")
    }

    @Test(arguments: [
        (["verdict", "--session", ""], "--session must not be empty"),
        (["verdict", "--max-attempts", "0"], "--max-attempts must be 1 or more"),
        (["verdict", "--give-up-within", "soon"], "--give-up-within must be from 0.001 to 86400 seconds"),
        (["verdict", "--endpoint", "/login"], "--endpoint must be a method and a path"),
        (["verdict", "--junit", ""], "--junit must name a file"),
    ])
    func badArgumentsGetUsage(arguments: [String], message: String) async throws {
        let result = try await runMishap(arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.standardError.contains(message) && result.standardError.contains("Usage: mishap verdict"), "\(result.standardError)")
    }
}
