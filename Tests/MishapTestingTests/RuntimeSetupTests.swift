import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTesting
import MishapTestSupport
import Testing

/// Setting failures up at runtime from a test, per session, and verifying what the client sent:
/// the typed wrappers of MishapTesting over one shared server.
@Suite(.onBlockingThreads) struct RuntimeSetupTests {
    static let shared: RunningMishap = try! Mishap.start(scenarios: defaultScenarios)

    /// Twenty tests at once each add their own rule to the same endpoint and see only their own.
    @Test func twentyParallelSessionsEachSeeTheirOwnRules() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    let session = Self.shared.session()
                    try session.addRules(yaml: """
                        endpoint: GET /isUserNameAvailable
                        rules:
                          - name: mine
                            respond: { status: 418, json: { error: true, reason: "session \(index)" } }
                        """, times: 2)
                    let client = Self.shared.client(in: session, retryPolicy: .never)
                    for _ in 1...2 {
                        let error = await apiError { try await client.checkUserNameAvailable("someone") }
                        #expect(error == .unexpectedStatus(418, reason: "session \(index)"))
                    }
                    #expect(try await client.checkUserNameAvailable("someone").isAvailable, "used up after 2 answers")
                    #expect(try session.count(path: "/isUserNameAvailable") == 3)
                    #expect(try session.count(rule: "mine") == 2)
                    #expect(Self.shared.runtimeRules(session: session).isEmpty, "used up, it is gone")
                }
            }
            try await group.waitForAll()
        }
    }

    @Test func forceTheNextLoginsIntoMaintenance() async throws {
        let session = Self.shared.session()
        let id = try session.force("POST /login", rule: "serverError", times: 1)
        #expect(Self.shared.runtimeRules(session: session) == [id])
        let client = Self.shared.client(in: session, retryPolicy: .never)
        let error = await apiError { try await client.login(email: "john@doe.com", password: "onlyjohnknowsme") }
        #expect(error == .server(status: 500, reason: "The database is corrupted", retryAfter: nil))
        #expect(try await client.login(email: "john@doe.com", password: "onlyjohnknowsme").userID == "123")
        #expect(try session.count(path: "/login", bodyContains: "john@doe.com") == 2)
        #expect(try session.count(header: (name: "content-type", value: "application/json")) == 2)
    }

    @Test func mistakesInRuntimeRulesAreLocated() throws {
        let session = Self.shared.session()
        #expect {
            try session.addRules(yaml: "endpoint: GET /x\nrules:\n  - name: a\n    respond: { stauts: 500 }\n")
        } throws: { error in
            (error as? ScenarioError)?.diagnostics.first?.description.hasPrefix("body:4:16: unknown key 'stauts'") == true
        }
        #expect(throws: (any Error).self) { try session.force("GET /nowhere", rule: "a") }
        #expect(throws: MishapSessionError.noServer) { try MishapSession(id: "alone", headerName: "X-Mishap-Session").addRules(yaml: "") }
    }

    @Test func unmatchedRequestsNameTheNearestRule() async throws {
        let session = Self.shared.session()
        try session.addRules(yaml: """
            endpoint: GET /orders/{id}
            rules:
              - name: shipped
                when: { query: { status: [shipped, delivered] } }
                respond: { json: { status: shipped } }
            """)
        var request = URLRequest(url: Self.shared.url("/orders/7?status=shiped"))
        session.apply(to: &request)
        let (_, response) = try await URLSession(configuration: .ephemeral).data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 404)
        let unmatched = try session.unmatched()
        #expect(unmatched.count == 1 && unmatched.first?.path == "/orders/7")
        #expect(unmatched.first?.nearMisses.first?.description
                == #"GET /orders/{id} rule shipped: query status: expected one of [delivered, shipped], got "shiped""#)
    }

    /// A UI-test-like client: another process, given only a base URL with the session in it,
    /// while the test sets the failure up and verifies through MishapTesting.
    @Test func aProcessGivenOnlyABaseURLIsInTheSession() async throws {
        let session = Self.shared.session("ui-\(UUID().uuidString)")
        let base = try #require(session.baseURL)
        #expect(base.absoluteString == Self.shared.baseURL.absoluteString + "/__session/" + session.id)
        try session.force("GET /isUserNameAvailable", rule: "maintenance!", times: 1)
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        curl.arguments = ["curl", "-s", "-o", "/dev/null", "-o", "/dev/null", "-w", "%{http_code} ", base.absoluteString + "/isUserNameAvailable?userName=someone",
                          base.absoluteString + "/isUserNameAvailable?userName=someone"]
        let output = Pipe()
        curl.standardOutput = output
        try curl.run()
        curl.waitUntilExit()
        let codes = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(codes == "500 200 ", "\(codes)")
        let requests = Self.shared.requests(session: session)
        #expect(requests.map(\.rule) == ["maintenanceForever", "available"])
        #expect(requests.allSatisfy { $0.path == "/isUserNameAvailable" && $0.header("User-Agent")?.hasPrefix("curl/") == true })
    }
}
