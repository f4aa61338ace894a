import MishapService
import MishapTesting
import MishapTestSupport
import Testing

/// `MishapOptions(upstream:)`: a test's Mishap in front of another server (here another
/// Mishap with the default scenarios, standing in for the real backend) breaks only the
/// requests its rules claim; the app's other calls reach the backend.
@Suite(.onBlockingThreads) struct MishapOptionsUpstreamTests {
    static let loginDown = """
        endpoint: POST /login
        rules:
          - name: maintenance
            respond: { status: 503, headers: { Retry-After: "7" }, json: { error_message: "Down for maintenance." } }
        """

    @Test func breaksOnlyWhatItsRulesClaim() async throws {
        let backend = try Mishap.start(scenarios: defaultScenarios)
        let front = try Mishap.start(scenarios: .yaml(Self.loginDown),
                                     options: MishapOptions(upstream: UpstreamOptions(url: backend.baseURL.absoluteString)))
        let session = front.session()
        let client = front.client(in: session)

        // Not the front's: the backend answers, with its own rules.
        let available = try await client.checkUserNameAvailable("someone")
        #expect(available == UserNameAvailableMessage(isAvailable: true, userName: "someone"))
        await #expect(throws: APIError.validation(reason: "Username is too short.")) {
            try await client.checkUserNameAvailable("abc")
        }
        // The front's: the failure the test chose.
        let error = await apiError { try await client.login(email: "john@doe.com", password: "onlyjohnknowsme") }
        #expect(error == .server(status: 503, reason: "Down for maintenance.", retryAfter: 7))

        // Both journals tell the story: the front saw three requests, the backend two.
        #expect(front.requests(session: session).map(\.path) == ["/isUserNameAvailable", "/isUserNameAvailable", "/login"])
        #expect(front.requests(session: session).map(\.rule) == [nil, nil, "maintenance"])
        #expect(backend.requests().map(\.rule) == ["available", "tooShort"])
        // The session header reaches the backend as any header does.
        #expect(backend.requests().allSatisfy { $0.session == session.id })
    }
}
