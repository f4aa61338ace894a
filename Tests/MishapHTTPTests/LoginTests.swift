import Foundation
import MishapTestSupport
import Testing

/// `POST /login`, one test per case of `scenarios/login.yaml`, with JSON and form bodies.
@Suite struct LoginTests {
    static let formContentType = "application/x-www-form-urlencoded"

    func login(_ fields: [String: Any], on server: TestServer) async throws -> ClientResponse {
        try await server.post("/login", json: fields)
    }

    /// Posts `form` exactly as written (already encoded).
    func login(form: String, on server: TestServer) async throws -> ClientResponse {
        try await server.send("POST", "/login", body: Data(form.utf8), headers: ["Content-Type": Self.formContentType])
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

    // MARK: Success

    @Test func johnLogsInWithJSON() async throws {
        let server = try TestServer()
        let response = try await login(["email": "john@doe.com", "password": "onlyjohnknowsme"], on: server)
        expectSuccess(response)
    }

    @Test func johnLogsInWithAPercentEncodedForm() async throws {
        let server = try TestServer()
        let response = try await login(form: "email=john%40doe.com&password=onlyjohnknowsme", on: server)
        expectSuccess(response)
    }

    @Test func formWithCharsetAndFieldsInAnyOrderIsAForm() async throws {
        let server = try TestServer()
        let response = try await server.send(
            "POST", "/login", body: Data("password=onlyjohnknowsme&email=john@doe.com".utf8),
            headers: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"])
        expectSuccess(response)
    }

    @Test func plusInAFormIsASpace() async throws {
        // "onlyjohnknowsme+" is "onlyjohnknowsme " once decoded: not John's password.
        let server = try TestServer()
        let response = try await login(form: "email=john%40doe.com&password=onlyjohnknowsme+", on: server)
        expectError(response, status: 401, message: "Invalid credentials.")
    }

    @Test func encodedPlusInAFormStaysAPlus() async throws {
        // "maintenance%2Bx@..." decodes to "maintenance+x@...", which is not "maintenance@": an unknown user.
        let server = try TestServer()
        let response = try await login(form: "email=maintenance%2Bx%40x.com&password=secret", on: server)
        expectError(response, status: 404, message: "User doesn't exist.")
    }

    // MARK: Missing or empty fields

    @Test(arguments: [
        ["password": "onlyjohnknowsme"],
        ["email": "", "password": "onlyjohnknowsme"],
        ["email": "john@doe.com"],
        ["email": "john@doe.com", "password": ""],
    ])
    func missingOrEmptyFieldIsRequired(fields: [String: String]) async throws {
        let server = try TestServer()
        let response = try await login(fields, on: server)
        expectError(response, status: 400, message: "Email and password are required.")
    }

    @Test(arguments: [
        "password=onlyjohnknowsme",
        "email=&password=onlyjohnknowsme",
        "email=john%40doe.com",
        "email=john%40doe.com&password=",
    ])
    func missingOrEmptyFormFieldIsRequired(form: String) async throws {
        let server = try TestServer()
        let response = try await login(form: form, on: server)
        expectError(response, status: 400, message: "Email and password are required.")
    }

    @Test func nullFieldCountsAsMissing() async throws {
        let server = try TestServer()
        let response = try await login(["email": NSNull(), "password": "onlyjohnknowsme"], on: server)
        expectError(response, status: 400, message: "Email and password are required.")
    }

    // MARK: Validation

    @Test func emailWithoutAtIsNotValid() async throws {
        let server = try TestServer()
        let response = try await login(["email": "john.doe.com", "password": "onlyjohnknowsme"], on: server)
        expectError(response, status: 400, message: "Email is not valid.")
    }

    @Test func threeCharacterPasswordIsTooShort() async throws {
        let server = try TestServer()
        let response = try await login(["email": "john@doe.com", "password": "abc"], on: server)
        expectError(response, status: 400, message: "Password is too short.")
    }

    @Test func fourCharacterPasswordIsLongEnough() async throws {
        let server = try TestServer()
        let response = try await login(["email": "john@doe.com", "password": "abcd"], on: server)
        expectError(response, status: 401, message: "Invalid credentials.")
    }

    // MARK: Failures on purpose

    @Test func servererrorEmailFailsWithoutRetryAfter() async throws {
        let server = try TestServer()
        let response = try await login(["email": "servererror@x.com", "password": "secret"], on: server)
        expectError(response, status: 500, message: "The database is corrupted", retryAfter: nil)
    }

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

    @Test func illegalresponseEmailLeavesOutTheToken() async throws {
        let server = try TestServer()
        let response = try await login(["email": "illegalresponse@x.com", "password": "secret"], on: server)
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.json?["user_id"] as? String == "123")
        #expect(response.json?["token"] == nil)
        #expect(response.text == #"{"user_id":"123"}"#)
    }

    // MARK: Credentials

    @Test func johnWithAnotherPasswordIsUnauthorized() async throws {
        let server = try TestServer()
        let response = try await login(["email": "john@doe.com", "password": "wrongpassword"], on: server)
        expectError(response, status: 401, message: "Invalid credentials.")
    }

    @Test func unknownEmailDoesNotExist() async throws {
        let server = try TestServer()
        let response = try await login(["email": "jane@doe.com", "password": "onlyjohnknowsme"], on: server)
        expectError(response, status: 404, message: "User doesn't exist.")
    }

    @Test func unknownEmailInAFormDoesNotExist() async throws {
        let server = try TestServer()
        let response = try await login(form: "email=jane%40doe.com&password=onlyjohnknowsme", on: server)
        expectError(response, status: 404, message: "User doesn't exist.")
    }

    // MARK: Malformed bodies

    @Test(arguments: [
        #"{"email": "john@doe.com", "password": "onlyjohnknowsme""#,
        "email=john@doe.com&password=onlyjohnknowsme",
        #"{'email': 'john@doe.com'}"#,
        "not json at all",
    ])
    func invalidJSONIsMalformed(body: String) async throws {
        let server = try TestServer()
        let response = try await server.send("POST", "/login", body: Data(body.utf8), headers: ["Content-Type": "application/json"])
        expectError(response, status: 400, message: "Malformed request body.")
    }

    @Test func jsonWithoutContentTypeIsStillJSON() async throws {
        let server = try TestServer()
        let body = Data(#"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#.utf8)
        let response = try server.sendRaw("POST", "/login", body: Array(body))
        expectSuccess(response)
    }
}
