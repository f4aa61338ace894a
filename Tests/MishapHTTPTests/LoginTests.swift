import Foundation
import MishapTestSupport
import Testing

/// `POST /login` of the default scenarios over a socket: bodies of each format reach the engine,
/// and the cases that need a sequence of requests (maintenance's cycle).
@Suite(.onBlockingThreads) struct LoginTests {
    /// Posts `fields` as JSON.
    func login(_ fields: [String: Any], on server: TestServer) async throws -> ClientResponse {
        try await server.post("/login", json: fields)
    }

    func expectSuccess(_ response: ClientResponse) {
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.header("Retry-After") == nil)
        #expect(response.json?["user_id"] as? String == "123")
        #expect(response.json?["token"] as? String == "c7d83mdla_3ms")
        #expect(response.json?.count == 2)
    }

    func expectError(_ response: ClientResponse, status: Int, message: String, retryAfter: String? = nil) {
        #expect(response.status == status)
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.header("Retry-After") == retryAfter)
        #expect(response.json?["error_message"] as? String == message)
        #expect(response.json?.count == 1)
    }

    typealias Attempt = LoginAttempt

    static let unknownUser = (status: 404, message: "User doesn't exist.")
    static let malformed = (status: 400, message: "Malformed request body.")

    /// A login in each body format, over a socket: the body reaches the engine whole. Every
    /// case of login.yaml is tested against the engine in MishapScenariosTests' LoginRowTests.
    static let attempts = [
        Attempt("John logs in with JSON", json: #"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#),
        Attempt("John logs in with a percent-encoded form", form: "email=john%40doe.com&password=onlyjohnknowsme"),
        Attempt("An unknown email in a form does not exist", form: "email=jane%40doe.com&password=onlyjohnknowsme", error: unknownUser),
        Attempt("JSON cut short", json: #"{"email": "john@doe.com", "password": "onlyjohnknowsme""#, error: malformed),
    ]

    @Test(arguments: attempts)
    func loginIsAnsweredLikeTheSeedServer(_ attempt: Attempt) async throws {
        let server = try TestServer()
        let response = try await server.send("POST", "/login", body: Data(attempt.body.utf8), headers: ["Content-Type": attempt.contentType])
        if let error = attempt.error {
            expectError(response, status: error.status, message: error.message)
        } else {
            expectSuccess(response)
        }
    }

    // MARK: Failures on purpose

    @Test func maintenanceEmailFailsTwiceThenSucceedsInACycle() async throws {
        let server = try TestServer()
        let credentials = ["email": "maintenance@x.com", "password": "secret"]
        for round in 1...2 {
            for call in 1...2 {
                let response = try await login(credentials, on: server)
                #expect(response.status == 500, "round \(round), call \(call)")
                expectError(response, status: 500, message: "Temporarily unavailable for maintenance", retryAfter: "17")
            }
            expectSuccess(try await login(credentials, on: server))
        }
    }

    @Test func loginAndUserNameMaintenanceCountSeparately() async throws {
        let server = try TestServer()
        let credentials = ["email": "maintenance@x.com", "password": "secret"]
        _ = try await server.send("GET", "/isUserNameAvailable?userName=maintenance")
        _ = try await server.send("GET", "/isUserNameAvailable?userName=maintenance")
        let first = try await login(credentials, on: server)
        expectError(first, status: 500, message: "Temporarily unavailable for maintenance", retryAfter: "17")
    }

    @Test func jsonWithoutContentTypeIsStillJSON() async throws {
        let server = try TestServer()
        let body = Data(#"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#.utf8)
        let response = try server.sendRaw("POST", "/login", body: Array(body))
        expectSuccess(response)
    }
}
