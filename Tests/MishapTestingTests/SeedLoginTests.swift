import MishapTesting
import MishapTestSupport
import Testing

/// `POST /login` of the default scenarios, as the login screens of seeds 000 and 001 use it:
/// success `{"user_id","token"}`, failures `{"error_message"}`.
@Suite(.onBlockingThreads) struct SeedLoginTests {
    static let john = LoginResponse(userID: "123", token: "c7d83mdla_3ms")

    /// The right email and password sign in with a token.
    @Test func rightCredentialsSignIn() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let client = mishap.client(in: mishap.session())
            let signedIn = try await client.login(email: "john@doe.com", password: "onlyjohnknowsme")
            #expect(signedIn == Self.john)
        }
    }

    /// A wrong password (401) and an unknown user (404) are `.invalidCredentials` with the server's message.
    @Test(arguments: [
        ("john@doe.com", "guess", "Invalid credentials."),
        ("jane@doe.com", "secret", "User doesn't exist."),
    ])
    func refusedLoginShowsTheServersMessage(email: String, password: String, message: String) async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            await #expect(throws: APIError.invalidCredentials(message)) {
                try await mishap.client(in: session).login(email: email, password: password)
            }
            #expect(mishap.requests(session: session).count == 1)
        }
    }

    /// Each 400 row of `/login` is `.validation` with the server's `error_message`.
    @Test(arguments: [
        ("", "secret", "Email and password are required."),
        ("john@doe.com", "", "Email and password are required."),
        ("john.doe.com", "secret", "Email is not valid."),
        ("john@doe.com", "abc", "Password is too short."),
    ])
    func invalidInputIsAValidationError(email: String, password: String, reason: String) async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            await #expect(throws: APIError.validation(reason: reason)) {
                try await mishap.client(in: mishap.session()).login(email: email, password: password)
            }
        }
    }

    /// Seed 000: an error is one outcome among others, the next tap still signs in.
    @Test func errorsDoNotEndTheLoginFlow() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let client = mishap.client(in: mishap.session())
            let taps = [("john@doe.com", "onlyjohnknowsme"), ("john@doe.com", "guess"), ("john@doe.com", "onlyjohnknowsme")]
            var outcomes: [Result<LoginResponse, APIError>] = []
            for (email, password) in taps {
                do throws(APIError) {
                    outcomes.append(.success(try await client.login(email: email, password: password)))
                } catch {
                    outcomes.append(.failure(error))
                }
            }
            #expect(outcomes == [.success(Self.john), .failure(.invalidCredentials("Invalid credentials.")), .success(Self.john)])
        }
    }

    /// `servererror@…` is a 500 without `Retry-After`: reported at once, never retried.
    @Test func databaseCorruptedIsNotRetried() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            await #expect(throws: APIError.server(status: 500, reason: "The database is corrupted", retryAfter: nil)) {
                try await mishap.client(in: session).login(email: "servererror@doe.com", password: "secret")
            }
            #expect(mishap.requests(session: session).count == 1)
        }
    }

    /// `maintenance@…` fails twice with `Retry-After: 1`, then signs in; every retry waited as told.
    @Test func maintenanceClearsAfterTwoHonouredRetries() async throws {
        try await Mishap.withServer(scenarios: quickMaintenance) { mishap in
            let session = mishap.session()
            let signedIn = try await mishap.client(in: session).login(email: "maintenance@doe.com", password: "secret")
            #expect(signedIn == Self.john)
            #expect(mishap.requests(path: "/login", method: "POST", session: session).map(\.status) == [500, 500, 200])
            #expect(mishap.retries(session: session, endpoint: "POST /login").map(\.honoured) == [true, true])
        }
    }

    /// `illegalresponse@…` answers without a token: `.decoding`.
    @Test func illegalResponseIsADecodingError() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            await #expect(throws: APIError.decoding) {
                try await mishap.client(in: mishap.session()).login(email: "illegalresponse@doe.com", password: "secret")
            }
        }
    }

    /// `ratelimited@…` is a 429 asking for 30 s, more than the client waits: reported at once.
    @Test func rateLimitIsReported() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            await #expect(throws: APIError.server(status: 429, reason: "Too many login attempts.", retryAfter: 30)) {
                try await mishap.client(in: session).login(email: "ratelimited@doe.com", password: "secret")
            }
            #expect(mishap.requests(session: session).count == 1)
        }
    }
}
