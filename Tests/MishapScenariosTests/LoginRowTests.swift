import Foundation
import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// `POST /login` of the default scenarios (`scenarios/login.yaml`), every case with JSON and
/// form bodies, asked of the engine itself: reading the body and choosing the rule is the
/// engine's work, with no socket in it. MishapHTTPTests' LoginTests sends logins over a socket,
/// and the cases that need a sequence of requests.
@Suite struct LoginRowTests {
    typealias Attempt = LoginAttempt

    static let required = (status: 400, message: "Email and password are required.")
    static let invalidCredentials = (status: 401, message: "Invalid credentials.")
    static let unknownUser = (status: 404, message: "User doesn't exist.")
    static let malformed = (status: 400, message: "Malformed request body.")

    static let attempts = [
        // Success.
        Attempt("John logs in with JSON", json: #"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#),
        Attempt("John logs in with a percent-encoded form", form: "email=john%40doe.com&password=onlyjohnknowsme"),
        Attempt("A form with a charset and its fields in any order is a form", form: "password=onlyjohnknowsme&email=john@doe.com",
                contentType: "application/x-www-form-urlencoded; charset=utf-8"),
        // "onlyjohnknowsme+" is "onlyjohnknowsme " once decoded: not John's password.
        Attempt("A plus in a form is a space", form: "email=john%40doe.com&password=onlyjohnknowsme+", error: invalidCredentials),
        // "maintenance%2Bx@..." decodes to "maintenance+x@...", which is not "maintenance@": an unknown user.
        Attempt("An encoded plus in a form stays a plus", form: "email=maintenance%2Bx%40x.com&password=secret", error: unknownUser),

        // Missing or empty fields.
        Attempt("Missing email", json: #"{"password":"onlyjohnknowsme"}"#, error: required),
        Attempt("Empty email", json: #"{"email":"","password":"onlyjohnknowsme"}"#, error: required),
        Attempt("Missing password", json: #"{"email":"john@doe.com"}"#, error: required),
        Attempt("Empty password", json: #"{"email":"john@doe.com","password":""}"#, error: required),
        Attempt("Missing email in a form", form: "password=onlyjohnknowsme", error: required),
        Attempt("Empty email in a form", form: "email=&password=onlyjohnknowsme", error: required),
        Attempt("Missing password in a form", form: "email=john%40doe.com", error: required),
        Attempt("Empty password in a form", form: "email=john%40doe.com&password=", error: required),
        Attempt("A null field counts as missing", json: #"{"email":null,"password":"onlyjohnknowsme"}"#, error: required),

        // Validation.
        Attempt("An email without @ is not valid", json: #"{"email":"john.doe.com","password":"onlyjohnknowsme"}"#,
                error: (status: 400, message: "Email is not valid.")),
        Attempt("A three-character password is too short", json: #"{"email":"john@doe.com","password":"abc"}"#,
                error: (status: 400, message: "Password is too short.")),
        Attempt("A four-character password is long enough", json: #"{"email":"john@doe.com","password":"abcd"}"#,
                error: invalidCredentials),
        // The failure triggers sit below the input checks.
        Attempt("A failure trigger with a too-short password is still too short",
                json: #"{"email":"ratelimited@x.com","password":"abc"}"#, error: (status: 400, message: "Password is too short.")),

        // A failure on purpose, without Retry-After.
        Attempt("servererror fails", json: #"{"email":"servererror@x.com","password":"secret"}"#,
                error: (status: 500, message: "The database is corrupted")),

        // Credentials.
        Attempt("John with another password is unauthorized", json: #"{"email":"john@doe.com","password":"wrongpassword"}"#,
                error: invalidCredentials),
        Attempt("An unknown email does not exist", json: #"{"email":"jane@doe.com","password":"onlyjohnknowsme"}"#, error: unknownUser),
        Attempt("An unknown email in a form does not exist", form: "email=jane%40doe.com&password=onlyjohnknowsme", error: unknownUser),

        // Malformed bodies.
        Attempt("JSON cut short", json: #"{"email": "john@doe.com", "password": "onlyjohnknowsme""#, error: malformed),
        Attempt("A form labelled JSON", json: "email=john@doe.com&password=onlyjohnknowsme", error: malformed),
        Attempt("Single quotes", json: #"{'email': 'john@doe.com'}"#, error: malformed),
        Attempt("Not JSON at all", json: "not json at all", error: malformed),
    ]

    @Test(arguments: attempts)
    func loginIsAnsweredLikeTheSeedServer(_ attempt: Attempt) throws {
        let request = Request(method: "POST", path: "/login", headers: [Field("Content-Type", attempt.contentType)],
                              body: Array(attempt.body.utf8))
        let plan = UserNameAvailabilityRowTests.scenarios.makeEngine().respond(to: request)
        #expect(plan.header("Content-Type") == "application/json; charset=utf-8")
        #expect(plan.header("Retry-After") == nil)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(plan.body)) as? [String: Any], "\(plan.text)")
        if let error = attempt.error {
            #expect(plan.status == error.status)
            #expect(json["error_message"] as? String == error.message)
            #expect(json.count == 1, "\(plan.text)")
        } else {
            #expect(plan.status == 200)
            #expect(json["user_id"] as? String == "123")
            #expect(json["token"] as? String == "c7d83mdla_3ms")
            #expect(json.count == 2, "\(plan.text)")
        }
    }
}
