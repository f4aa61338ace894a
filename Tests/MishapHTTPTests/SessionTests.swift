import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// `X-Mishap-Session` (a cycle position per session) and `X-Mishap-Rule` (answering with a named
/// rule), with their default and custom header names.
@Suite(.onBlockingThreads) struct SessionTests {
    static let maintenance = "/isUserNameAvailable?userName=maintenance"

    func maintenanceStatus(_ server: TestServer, session: String?, header: String = "X-Mishap-Session") async throws -> Int {
        let response = try await server.send("GET", Self.maintenance, headers: session.map { [header: $0] } ?? [:])
        if response.status == 500 {
            #expect(response.header("Retry-After") == "17")
            #expect(response.json?["reason"] as? String == "Temporarily unavailable for maintenance")
        } else {
            #expect(response.json?["userName"] as? String == "maintenance")
            #expect(response.json?["isAvailable"] as? Bool == true)
        }
        return response.status
    }

    // MARK: Sessions

    @Test func interleavedSessionsEachFailTwiceThenSucceed() async throws {
        let server = try TestServer()
        var seen: [String: [Int]] = [:]
        for session in ["a", "b", "a", "b", "a", "b"] {
            seen[session, default: []].append(try await maintenanceStatus(server, session: session))
        }
        #expect(seen == ["a": [500, 500, 200], "b": [500, 500, 200]])
    }

    @Test func requestsWithoutASessionKeepTheSharedCounter() async throws {
        let server = try TestServer()
        var shared: [Int] = []
        var session: [Int] = []
        shared.append(try await maintenanceStatus(server, session: nil))
        session.append(try await maintenanceStatus(server, session: "a"))
        shared.append(try await maintenanceStatus(server, session: nil))
        session.append(try await maintenanceStatus(server, session: "a"))
        session.append(try await maintenanceStatus(server, session: "a"))
        shared.append(try await maintenanceStatus(server, session: nil))
        #expect(shared == [500, 500, 200])
        #expect(session == [500, 500, 200])
    }

    @Test func manySessionsInParallelEachSeeTheirOwnCycle() async throws {
        let server = try TestServer()
        let bySession = try await withThrowingTaskGroup(of: (String, [Int]).self) { group in
            for index in 0..<20 {
                group.addTask {
                    let session = "session-\(index)"
                    var statuses: [Int] = []
                    for _ in 0..<6 {
                        statuses.append(try await server.send("GET", Self.maintenance, headers: ["X-Mishap-Session": session]).status)
                    }
                    return (session, statuses)
                }
            }
            return try await group.reduce(into: [String: [Int]]()) { $0[$1.0] = $1.1 }
        }
        #expect(bySession.count == 20)
        for (session, statuses) in bySession.sorted(by: { $0.key < $1.key }) {
            #expect(statuses == [500, 500, 200, 500, 500, 200], "\(session)")
        }
        // The shared counter was not touched.
        #expect(try await maintenanceStatus(server, session: nil) == 500)
    }

    @Test func loginMaintenanceCountsPerSession() async throws {
        let server = try TestServer()
        var seen: [String: [Int]] = [:]
        for session in ["a", "b", "b", "a", "b", "a"] {
            let response = try await FailureEndpoint.login.send("maintenance", to: server, headers: ["X-Mishap-Session": session])
            seen[session, default: []].append(response.status)
            if response.status == 200 { #expect(response.json?["token"] as? String == "c7d83mdla_3ms") }
        }
        #expect(seen == ["a": [500, 500, 200], "b": [500, 500, 200]])
    }

    @Test func sessionHeaderNameIsCaseInsensitive() throws {
        let server = try TestServer()
        var statuses: [Int] = []
        for name in ["x-mishap-session", "X-MISHAP-SESSION", "X-Mishap-Session"] {
            statuses.append(try server.sendRaw("GET", Self.maintenance, headers: [(name, "one")]).status)
        }
        #expect(statuses == [500, 500, 200])
    }

    // MARK: Forcing a rule

    @Test func forcingAFixedRuleIgnoresItsWhen() async throws {
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=bob", headers: ["X-Mishap-Rule": "serverError"])
        #expect(response.status == 500)
        #expect(response.json?["reason"] as? String == "The database is corrupted")
        #expect(response.header("Retry-After") == nil)
        // Without the header bob is too short (3 characters).
        let unforced = try await server.send("GET", "/isUserNameAvailable?userName=bob")
        #expect(unforced.status == 400)
        #expect(unforced.json?["reason"] as? String == "Username is too short.")
    }

    @Test func forcingACycleOnAnotherNameStillCycles() async throws {
        let server = try TestServer()
        var responses: [ClientResponse] = []
        for _ in 0..<6 {
            responses.append(try await server.send("GET", "/isUserNameAvailable?userName=bob", headers: ["X-Mishap-Rule": "maintenance"]))
        }
        #expect(responses.map(\.status) == [500, 500, 200, 500, 500, 200])
        // The passing step falls through to the rules below: bob's normal answer.
        #expect(responses[2].json?["userName"] as? String == "bob")
        #expect(responses[2].json?["isAvailable"] as? Bool == true)
        #expect(responses[0].header("Retry-After") == "17")
    }

    @Test func forcingIgnoresChance() async throws {
        let server = try TestServer()
        let statuses = try await server.statuses(12, "/isUserNameAvailable?userName=bob", headers: ["X-Mishap-Rule": "flaky"])
        #expect(statuses == Array(repeating: 500, count: 12))
    }

    @Test func forcingAnUnknownRuleListsTheRules() async throws {
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=bob", headers: ["X-Mishap-Rule": "nope"])
        #expect(response.status == 400)
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.json?["error"] as? Bool == true)
        let reason = try #require(response.json?["reason"] as? String, "\(response.text)")
        let rules = try #require(server.service.scenarios.endpoints.first { $0.name == "GET /isUserNameAvailable" }).rules
            .map { $0.aliases.isEmpty ? $0.name : "\($0.name) (\($0.aliases.joined(separator: ", ")))" }
        #expect(reason == "X-Mishap-Rule: no rule 'nope' in GET /isUserNameAvailable; its rules are " + rules.joined(separator: ", "))
        for name in ["missing", "serverError", "maintenance", "reset", "flaky", "available"] {
            #expect(reason.contains(name), "\(name) not listed: \(reason)")
        }
        // Names are compared in any case, but not loosely otherwise.
        #expect(try await server.send("GET", "/isUserNameAvailable?userName=bob", headers: ["X-Mishap-Rule": "SERVERERROR"]).status == 500)
        #expect(try await server.send("GET", "/isUserNameAvailable?userName=bob", headers: ["X-Mishap-Rule": "server-error"]).status == 400)
    }

    @Test func forcingOnLoginWithAFixedBody() async throws {
        let server = try TestServer()
        let credentials: [String: Any] = ["email": "john@doe.com", "password": "onlyjohnknowsme"]
        func login(_ rule: String?) async throws -> ClientResponse {
            try await server.send("POST", "/login", body: JSONSerialization.data(withJSONObject: credentials),
                                  headers: ["Content-Type": "application/json"].merging(rule.map { ["X-Mishap-Rule": $0] } ?? [:]) { a, _ in a })
        }
        #expect(try await login(nil).status == 200)
        let corrupted = try await login("serverError")
        #expect(corrupted.status == 500)
        #expect(corrupted.json?["error_message"] as? String == "The database is corrupted")
        let limited = try await login("rateLimited")
        #expect(limited.status == 429)
        #expect(limited.header("Retry-After") == "30")
        let unknown = try await login("nope")
        #expect(unknown.status == 400)
        let reason = unknown.json?["reason"] as? String ?? ""
        #expect(reason.hasPrefix("X-Mishap-Rule: no rule 'nope' in POST /login; its rules are malformedBody, missingField"), "\(reason)")
    }

    @Test func forcingDoesNotReachAnotherPath() async throws {
        let server = try TestServer()
        let response = try await server.send("GET", "/nowhere", headers: ["X-Mishap-Rule": "serverError"])
        #expect(response.status == 404)
        #expect(response.text == #"{"error":true,"reason":"Not Found"}"#)
    }

    // MARK: Custom header names

    @Test func customHeaderNames() async throws {
        let server = try TestServer(options: ServiceOptions(engine: EngineOptions(sessionHeader: "X-Test-Id", ruleHeader: "X-Force")))
        let bob = "/isUserNameAvailable?userName=bob"
        #expect(try await server.send("GET", bob, headers: ["X-Force": "serverError"]).status == 500)
        #expect(try await server.send("GET", "/isUserNameAvailable?userName=bobby", headers: ["X-Mishap-Rule": "serverError"]).status == 200)
        let unknown = try await server.send("GET", bob, headers: ["X-Force": "nope"])
        #expect(unknown.status == 400)
        #expect((unknown.json?["reason"] as? String)?.hasPrefix("X-Force: no rule 'nope' in GET /isUserNameAvailable") == true,
                "\(unknown.text)")

        // X-Mishap-Session is an ordinary header now: those requests share one counter, while
        // X-Test-Id keeps its own.
        var ignored: [Int] = []
        var custom: [Int] = []
        for session in ["a", "b", "c"] {
            ignored.append(try await server.send("GET", Self.maintenance, headers: ["X-Mishap-Session": session]).status)
            custom.append(try await server.send("GET", Self.maintenance, headers: ["X-Test-Id": "a"]).status)
        }
        #expect(ignored == [500, 500, 200])
        #expect(custom == [500, 500, 200])
    }
}

/// `chance` draws from the seeded random source: a seed repeats the sequence.
@Suite(.onBlockingThreads) struct ChanceTests {
    static let flaky = "/isUserNameAvailable?userName=flaky"

    @Test func aSeedRepeatsTheFlakySequence() async throws {
        let first = try await TestServer(options: ServiceOptions(engine: EngineOptions(seed: 7))).statuses(40, Self.flaky)
        let second = try await TestServer(options: ServiceOptions(engine: EngineOptions(seed: 7))).statuses(40, Self.flaky)
        #expect(first == second)
        #expect(Set(first) == [200, 500], "\(first)")
        let failures = first.filter { $0 == 500 }.count
        #expect((10...30).contains(failures), "\(failures) of 40 failed: \(first)")
        let other = try await TestServer(options: ServiceOptions(engine: EngineOptions(seed: 8))).statuses(40, Self.flaky)
        #expect(other != first, "seeds 7 and 8 gave the same 40 draws")
    }

    @Test func flakyAnswersNormallyOtherwise() async throws {
        let server = try TestServer(options: ServiceOptions(engine: EngineOptions(seed: 7)))
        var bodies: [Int: Set<String>] = [:]
        for _ in 0..<20 {
            let response = try await server.send("GET", Self.flaky)
            bodies[response.status, default: []].insert(response.text)
        }
        #expect(bodies[500] == [#"{"error":true,"reason":"Internal server error"}"#])
        #expect(bodies[200] == [#"{"isAvailable":true,"userName":"flaky"}"#])
    }

    @Test func flakyLoginFailsOrAnswersAsForAnyUnknownUser() async throws {
        // flaky@x.com is not a user: the requests that are not failed get the 404 of any other email.
        let server = try TestServer(options: ServiceOptions(engine: EngineOptions(seed: 7)))
        var statuses: Set<Int> = []
        for _ in 0..<20 { statuses.insert(try await FailureEndpoint.login.send("flaky", to: server).status) }
        #expect(statuses == [500, 404])
    }
}
