import Foundation
import MishapTestSupport
import Testing

/// `mishap sweep` against a running `mishap serve`: a command run once per rule of an endpoint,
/// each run in its own session with the rule forced, stopped after `--timeout`, and judged.
@Suite("mishap sweep", .onBlockingThreads)
struct SweepCommandTests {
    static let endpoint = "GET /isUserNameAvailable"
    static let client = Paths.repository + "/docs/examples/username_client.py"

    /// A server of the default scenarios, and its URL.
    static func server() async throws -> (ChildProcess, String) {
        let (server, port) = try await ServeTests.startServer(["serve", "--port", "0", "--scenarios", Paths.scenarios])
        return (server, "http://127.0.0.1:\(port)")
    }

    /// The table's row of `rule`, split into its cells (two spaces or more apart).
    static func row(_ output: String, _ rule: String) -> [String]? {
        output.components(separatedBy: "\n").first { $0.dropFirst(2).hasPrefix(rule + " ") }.map { line in
            [String(line.prefix(1))] + line.dropFirst(2).components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
        }
    }

    /// Whether the process `pid` has ended: gone, or a zombie no one reaped yet (its parent,
    /// the command's shell, was killed with it).
    static func ended(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return true }
        let state = stat[stat.index(after: close)...].first { $0 != " " }
        return state == "Z" || state == "X"
    }

    @Test("The issue's proof: the Python client swept over failures of GET /isUserNameAvailable, the rule it mishandles marked, JUnit for CI")
    func pythonClientSweep() async throws {
        let (server, url) = try await Self.server()
        defer { server.kill() }
        let folder = try TemporaryFolder()
        let junit = folder.path + "/sweep.xml"
        let result = try await runMishap(["sweep", "--url", url, "--endpoint", Self.endpoint, "--rules", "tooShort,serverError,maintenanceForever,reset,badutf8",
                                          "--junit", junit, "--", "python3", Self.client], timeout: .seconds(60))
        #expect(result.status == 1, "badUTF8 crashes the client: \(result)")
        let output = result.standardOutput
        #expect(Self.row(output, "tooShort") == ["✓", "tooShort", "0", "1", "1 request", "ok"], "\(output)")
        #expect(Self.row(output, "serverError") == ["✓", "serverError", "0", "3", "retried 2 times", "ok"], "\(output)")
        #expect(Self.row(output, "maintenanceForever") == ["✓", "maintenanceForever", "0", "1", "1 request", "ok"], "\(output)")
        #expect(Self.row(output, "reset") == ["✓", "reset", "0", "3", "retried 2 times", "ok"], "\(output)")
        #expect(Self.row(output, "badUTF8") == ["✗", "badUTF8", "1", "1", "1 request", "ok"], "named as the scenarios name it: \(output)")
        #expect(output.contains("survived 4 of 5 failures of GET /isUserNameAvailable; not: badUTF8\n"), "\(output)")
        // The client's own output passes through, in rule order.
        #expect(output.hasPrefix("Not accepted (400).\nThe server failed (500). Try again later.\n"), "\(output)")
        #expect(result.standardError.contains("UnicodeDecodeError"), "\(result.standardError)")
        #expect(result.standardError.contains("mishap sweep: badUTF8 (5 of 5), session sweep-"), "\(result.standardError)")

        let document = try XMLTree(contentsOfFile: junit)
        #expect(document.root.name == "testsuites")
        let cases = document.root.elements("testsuite").flatMap { $0.elements("testcase") }
        #expect(cases.compactMap { $0.attributes["name"] } == ["tooShort", "serverError", "maintenanceForever", "reset", "badUTF8"])
        #expect(cases.map { $0.elements("failure").count } == [0, 0, 0, 0, 1])
        #expect(cases[4].elements("failure").first?.attributes["message"] == "the command exited 1")
        #expect(cases.allSatisfy { Double($0.attributes["time"] ?? "") != nil })
    }

    @Test("Every rule of the endpoint by default, in order, a row each; --json has a run each with the server's verdict, the command's output kept off standard output")
    func everyRuleAndJSON() async throws {
        let (server, url) = try await Self.server()
        defer { server.kill() }
        let scenarios = try #require(DaemonTests.fetch(UInt16(url.split(separator: ":").last!)!, "/__mishap/scenarios"))
        let listing = try #require(try JSONSerialization.jsonObject(with: Data(scenarios.body.utf8)) as? [String: Any])
        let endpoint = try #require((listing["endpoints"] as? [[String: Any]])?.first { $0["path"] as? String == "/isUserNameAvailable" })
        let rules = (endpoint["rules"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(rules.count > 30)

        let table = try await runMishap(["sweep", "--url", url, "--endpoint", "get /isUserNameAvailable", "--", "true"])
        #expect(table.status == 0, "\(table)")
        let lines = table.standardOutput.components(separatedBy: "\n")
        #expect(lines.first == "  rule                exit  requests  client           verdict", "\(lines)")
        #expect(lines.dropFirst().prefix(rules.count).map { String($0.dropFirst(2).prefix { $0 != " " }) } == rules, "\(lines)")
        #expect(Self.row(table.standardOutput, "flaky") == ["✓", "flaky", "0", "0", "made no request", "ok"])
        #expect(table.standardOutput.hasSuffix("survived \(rules.count) of \(rules.count) failures of get /isUserNameAvailable\n"))

        let json = try await runMishap(["sweep", "--url", url, "--endpoint", Self.endpoint, "--rules", "serverError,timeout", "--json",
                                        "--", "sh", "-c", #"echo "said $MISHAP_SESSION"; curl -s -o /dev/null -m 0.3 "$MISHAP_URL/isUserNameAvailable?userName=bobby"; exit 3"#])
        #expect(json.status == 1, "\(json)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any], "\(json.standardOutput)")
        #expect(root["endpoint"] as? String == Self.endpoint)
        #expect(root["survived"] as? Int == 0)
        let runs = try #require(root["runs"] as? [[String: Any]])
        #expect(runs.map { $0["rule"] as? String } == ["serverError", "timeout"])
        #expect(runs.map { $0["exitStatus"] as? Int } == [3, 3])
        #expect(runs.allSatisfy { $0["timedOut"] as? Bool == false && $0["requests"] as? Int == 1 && $0["survived"] as? Bool == false })
        let verdict = try #require(runs[1]["verdict"] as? [String: Any])
        #expect(verdict["session"] as? String == runs[1]["session"] as? String)
        let checks = try #require(verdict["checks"] as? [[String: Any]])
        #expect(checks.map { $0["name"] as? String }.prefix(7)
                == ["retryAfter", "backoff", "attemptBudget", "unsafeRetry", "clientErrorRetry", "oneRefresh", "giveUp"])
        #expect(json.standardError.contains("said sweep-"), "the command's output goes to standard error: \(json.standardError)")
    }

    @Test("Each run: its own session in MISHAP_URL and MISHAP_SESSION, the rule forced there alone, reset afterwards")
    func sessionsAndForcing() async throws {
        let (server, url) = try await Self.server()
        defer { server.kill() }
        let port = try #require(UInt16(url.split(separator: ":").last!))
        let folder = try TemporaryFolder()
        let notes = folder.path + "/notes"
        let script = #"printf '%s %s ' "$MISHAP_URL" "$MISHAP_SESSION" >> "$1"; "#
            + #"curl -s -o /dev/null -w '%{http_code} ' "$MISHAP_URL/isUserNameAvailable?userName=bobby" >> "$1"; "#
            + #"curl -s -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:\#(port)/isUserNameAvailable?userName=bobby" >> "$1""#
        let result = try await runMishap(["sweep", "--url", url + "/", "--endpoint", Self.endpoint, "--rules", "serverError,illegalName",
                                          "--", "/bin/sh", "-c", script, "sh", notes])
        #expect(result.status == 0, "\(result)")
        let lines = try String(contentsOfFile: notes, encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        try #require(lines.count == 2, "\(lines)")
        for (index, (line, rule, status)) in zip(lines, [("serverError", "500"), ("illegalName", "400")]).map({ ($0.0, $0.1.0, $0.1.1) }).enumerated() {
            let session = line[1]
            #expect(session.hasPrefix("sweep-") && session.hasSuffix("-\(index + 1)-\(rule)"), "\(line)")
            #expect(line[0] == url + "/__session/" + session, "\(line)")
            #expect(line[2] == status, "the rule is forced for the run's session: \(line)")
            #expect(line[3] == "200", "and for no other requests: \(line)")
            // Reset afterwards: the forced rule is gone, and the session's requests with it.
            #expect(DaemonTests.fetch(port, "/isUserNameAvailable?userName=bobby", headers: ["X-Mishap-Session: \(session)"])?.status == 200)
            #expect(DaemonTests.fetch(port, "/__mishap/requests/count?session=\(session)")?.body.hasPrefix(#"{"count":1,"#) == true,
                    "only the request just made")
        }
        #expect(Self.row(result.standardOutput, "illegalName") == ["✓", "illegalName", "0", "1", "1 request", "ok"], "\(result.standardOutput)")
    }

    @Test("A command past --timeout is stopped with what it started: SIGTERM, SIGKILL 2 s later for one that ignores it; reported as timed out")
    func timeout() async throws {
        let (server, url) = try await Self.server()
        defer { server.kill() }
        let folder = try TemporaryFolder()
        let pidFile = folder.path + "/child.pid"

        let prompt = try await runMishap(["sweep", "--url", url, "--endpoint", Self.endpoint, "--rules", "available", "--timeout", "300ms",
                                          "--json", "--", "sh", "-c", "sleep 30 & echo $! > \"$0\"; wait", pidFile])
        #expect(prompt.status == 1, "\(prompt)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(prompt.standardOutput.utf8)) as? [String: Any], "\(prompt)")
        let run = try #require((root["runs"] as? [[String: Any]])?.first)
        #expect(run["timedOut"] as? Bool == true && run["exitStatus"] is NSNull && run["signal"] as? String == "SIGTERM", "\(run)")
        let seconds = try #require(run["seconds"] as? Double)
        #expect(seconds >= 0.3 && seconds < 1.5, "SIGTERM ends it at once: \(seconds) s")
        let sleeper = try #require(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(await eventually(within: .seconds(2)) { Self.ended(sleeper) }, "the sleep the command started is stopped too")

        let junit = folder.path + "/timeout.xml"
        let stubborn = try await runMishap(["sweep", "--url", url, "--endpoint", Self.endpoint, "--rules", "available", "--timeout", "0.2",
                                            "--junit", junit, "--", "sh", "-c", "trap '' TERM; sleep 30 & echo $! > \"$0\"; wait", pidFile])
        #expect(stubborn.status == 1, "\(stubborn)")
        #expect(Self.row(stubborn.standardOutput, "available") == ["✗", "available", "timed out", "0", "made no request", "ok"],
                "\(stubborn.standardOutput)")
        let ignoring = try #require(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(ignoring != sleeper)
        #expect(await eventually(within: .seconds(2)) { Self.ended(ignoring) }, "the sleep that ignored SIGTERM is killed too")
        let available = try XMLTree(contentsOfFile: junit).root.descendants("testcase").first { $0.attributes["name"] == "available" }
        #expect(available?.elements("failure").first?.attributes["message"] == "still running after 200 ms")
        let took = try #require(Double(available?.attributes["time"] ?? ""))
        #expect(took >= 2.2, "SIGKILL came 2 s after SIGTERM: \(took) s")
    }

    @Test("Control-C stops the command with what it started, resets its session (its forced rule gone) and ends the sweep: exit 130")
    func interrupted() async throws {
        let (server, url) = try await Self.server()
        defer { server.kill() }
        let port = try #require(UInt16(url.split(separator: ":").last!))
        let folder = try TemporaryFolder()
        let pidFile = folder.path + "/child.pid"
        let sweep = try ChildProcess.mishap(["sweep", "--url", url, "--endpoint", Self.endpoint, "--rules", "serverError,available",
                                             "--", "sh", "-c", "sleep 30 & echo $! > \"$0\"; wait", pidFile])
        defer { sweep.kill() }
        #expect(await eventually(within: .seconds(10)) { FileManager.default.fileExists(atPath: pidFile) })
        #expect(DaemonTests.fetch(port, "/__mishap/scenarios")?.body.contains(#""runtimeRules""#) == true, "the rule is forced while it runs")
        sweep.signal(SIGINT)
        #expect(await sweep.waitForExit(timeout: .seconds(5)))
        #expect(sweep.exitStatus == 130, "\(sweep.standardError)")
        #expect(sweep.standardError.contains("mishap sweep: stopped by SIGINT; 0 of 2 rules run"), "\(sweep.standardError)")
        let sleeper = try #require(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(await eventually(within: .seconds(2)) { Self.ended(sleeper) })
        #expect(DaemonTests.fetch(port, "/__mishap/scenarios")?.body.contains(#""runtimeRules""#) == false, "the session was reset")
        #expect(sweep.standardOutput.isEmpty, "no table: \(sweep.standardOutput)")
    }

    @Test("An unknown rule or endpoint, or a command that cannot run: exit 1 with the reason and what there is")
    func unknowns() async throws {
        let (server, url) = try await Self.server()
        defer { server.kill() }
        let rule = try await runMishap(["sweep", "--url", url, "--endpoint", Self.endpoint, "--rules", "serverError,nope", "--", "true"])
        #expect(rule.status == 1, "\(rule)")
        #expect(rule.standardError.contains("GET /isUserNameAvailable has no rule 'nope'; its rules: missing, emptyUserName, tooShort, "),
                "\(rule.standardError)")
        #expect(rule.standardOutput.isEmpty, "nothing ran: \(rule.standardOutput)")

        let endpoint = try await runMishap(["sweep", "--url", url, "--endpoint", "GET /isUserNameAvailabel", "--", "true"])
        #expect(endpoint.status == 1, "\(endpoint)")
        #expect(endpoint.standardError.contains(#"no endpoint "GET /isUserNameAvailabel" (did you mean "GET /isUserNameAvailable"?)"#),
                "\(endpoint.standardError)")

        let program = try await runMishap(["sweep", "--url", url, "--endpoint", Self.endpoint, "--rules", "serverError", "--", "no-such-program-here"])
        #expect(program.status == 1, "\(program)")
        #expect(program.standardError.contains("cannot run no-such-program-here: "), "\(program.standardError)")

        let nothing = try await runMishap(["sweep", "--url", "http://127.0.0.1:1", "--endpoint", Self.endpoint, "--", "true"])
        #expect(nothing.status == 1)
        #expect(nothing.standardError.contains("nothing accepts connections"), "\(nothing.standardError)")
    }

    @Test(arguments: [
        (["sweep", "--endpoint", "GET /x"], "give the command to run after --"),
        (["sweep", "--endpoint", "/x", "--", "true"], "--endpoint must be a method and a path"),
        (["sweep", "--endpoint", "GET /x", "--rules", ",", "--", "true"], "--rules must name at least one rule"),
        (["sweep", "--endpoint", "GET /x", "--timeout", "0", "--", "true"], "--timeout must be from 0.001 to 86400 seconds"),
        (["sweep", "--endpoint", "GET /x", "--session-prefix", "s/", "--", "true"], "--session-prefix must be a path like /__session"),
        (["sweep", "--endpoint", "GET /x", "--max-attempts", "0", "--", "true"], "--max-attempts must be 1 or more"),
    ])
    func badArgumentsGetUsage(arguments: [String], message: String) async throws {
        let result = try await runMishap(arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.standardError.contains(message) && result.standardError.contains("Usage: mishap sweep"), "\(result.standardError)")
    }
}
