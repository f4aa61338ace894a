import MishapTesting
import MishapTestSupport
import Testing

/// `GET /isUserNameAvailable` of the default scenarios, row by row, as the seed's sign-up form
/// sees it: an answer, or a validation error whose reason is shown under the field.
@Suite(.onBlockingThreads) struct SeedUserNameAvailabilityTests {
    /// Each 400 row becomes `.validation` with the server's reason, word for word, and is not retried.
    @Test(arguments: [
        ("", "Username must not be empty"),
        ("abc", "Username is too short."),
        ("👨‍👩‍👧", "Username is too short."),
        ("admin", "Username is not valid: admin."),
        ("superuser", "Username is not valid: superuser."),
    ])
    func validationErrorShowsTheServersReason(userName: String, reason: String) async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            let client = mishap.client(in: session)
            await #expect(throws: APIError.validation(reason: reason)) {
                try await client.checkUserNameAvailable(userName)
            }
            #expect(mishap.requests(session: session).count == 1)
        }
    }

    /// A name someone already has is answered `isAvailable: false`.
    @Test(arguments: ["peterfriese", "johnnyappleseed", "page", "johndoe"])
    func takenNameIsNotAvailable(userName: String) async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let client = mishap.client(in: mishap.session())
            let answer = try await client.checkUserNameAvailable(userName)
            #expect(answer == UserNameAvailableMessage(isAvailable: false, userName: userName))
        }
    }

    /// Any other name is available, and comes back as sent, non-ASCII included.
    @Test(arguments: ["someone", "jörg"])
    func otherNameIsAvailable(userName: String) async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let client = mishap.client(in: mishap.session())
            let answer = try await client.checkUserNameAvailable(userName)
            #expect(answer == UserNameAvailableMessage(isAvailable: true, userName: userName))
        }
    }
}
