import Foundation
import MishapTestSupport
import Testing

/// `X-Mishap-Rule` takes the name people see: every magic input of the default scenarios'
/// catalogue forces the rule it triggers, in any case, so the README's tables are all a client
/// needs; `empty` is the empty body on both endpoints.
@Suite(.onBlockingThreads) struct ForcedRuleNameTests {
    /// Inputs whose answer is immediate and fixed (no delay, fault, cycle or chance).
    static let userNameInputs = [
        "servererror", "maintenance!", "illegalresponse", "ratelimited", "ratelimiteddate", "unavailable",
        "unavailableseconds", "unauthorized", "requesttimeout", "badgateway", "gatewaytimeout", "wrongtype",
        "truncatedjson", "badutf8", "captiveportal", "notjson", "empty", "admin", "superuser",
    ]

    /// The email local parts of `POST /login` with a fixed answer.
    static let loginInputs = [
        "servererror", "illegalresponse", "ratelimited", "ratelimiteddate", "unavailable", "unavailableseconds",
        "unauthorized", "requesttimeout", "badgateway", "gatewaytimeout", "wrongtype", "truncatedjson", "badutf8",
        "captiveportal", "notjson", "empty",
    ]

    /// Whether `forced` (for `someone`) is the answer `typed` (for the input) would be with the
    /// input in place of `someone` where a placeholder echoes it: same status, type and body.
    static func same(_ forced: ClientResponse, _ typed: ClientResponse, input: String) -> Bool {
        let echoed = forced.text.contains("someone")
        let typedText = echoed ? typed.text.replacingOccurrences(of: input, with: "someone") : typed.text
        return forced.status == typed.status && forced.header("Content-Type") == typed.header("Content-Type") && forced.text == typedText
    }

    @Test func everyUserNameInputForcesItsRule() async throws {
        let server = try TestServer()
        for input in Self.userNameInputs {
            let encoded = input.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let typed = try await server.send("GET", "/isUserNameAvailable?userName=\(encoded)")
            for spelling in [input, input.uppercased()] {
                let forced = try await server.send("GET", "/isUserNameAvailable?userName=someone", headers: ["X-Mishap-Rule": spelling])
                #expect(Self.same(forced, typed, input: input), "X-Mishap-Rule: \(spelling): \(forced.status) \(forced.text) vs \(typed.status) \(typed.text)")
            }
        }
    }

    @Test func everyLoginInputForcesItsRule() async throws {
        let server = try TestServer()
        for input in Self.loginInputs {
            let form = ["Content-Type": "application/x-www-form-urlencoded"]
            let typed = try await server.send("POST", "/login", body: Data("email=\(input)@x.com&password=secret".utf8), headers: form)
            let forced = try await server.send("POST", "/login", body: Data("email=someone@x.com&password=secret".utf8),
                                               headers: form.merging(["X-Mishap-Rule": input.uppercased()]) { $1 })
            #expect(Self.same(forced, typed, input: input), "X-Mishap-Rule: \(input): \(forced.status) \(forced.text) vs \(typed.status) \(typed.text)")
        }
    }

    @Test func emptyIsTheEmptyBodyAndUnknownNamesListAliases() async throws {
        let server = try TestServer()
        let empty = try await server.send("GET", "/isUserNameAvailable?userName=someone", headers: ["X-Mishap-Rule": "empty"])
        #expect(empty.status == 200 && empty.text.isEmpty, "\(empty.status) \(empty.text)")
        let emptyLogin = try await server.send("POST", "/login", body: Data("{}".utf8), headers: ["X-Mishap-Rule": "Empty"])
        #expect(emptyLogin.status == 200 && emptyLogin.text.isEmpty, "\(emptyLogin.status) \(emptyLogin.text)")
        let unknown = try await server.send("GET", "/isUserNameAvailable?userName=someone", headers: ["X-Mishap-Rule": "nosuchrule"])
        #expect(unknown.status == 400)
        let reason = try #require(unknown.json?["reason"] as? String)
        #expect(reason.contains("maintenanceForever (maintenance!)") && reason.contains("illegalName (admin, superuser)"), "\(reason)")
    }
}
