import Foundation
import MishapTestSupport
import Testing

/// Scenario features the default scenarios do not use, from inline YAML, checked on the wire.
@Suite(.onBlockingThreads) struct InlineScenarioTests {
    static let yaml = """
        endpoints:
          - endpoint: GET /users/{id}
            rules:
              - name: douglas
                when: { path: { id: "42" } }
                respond: { json: { id: "{{path.id}}", name: Douglas } }
              - name: nobody
                respond: { status: 404, json: { error: true, reason: "No user {{path.id}}" } }

          - endpoint: GET /hello
            rules:
              - name: greeting
                respond: { text: "Hello, {{query.name}}!" }

          - endpoint: GET /secret
            rules:
              - name: authorized
                when: { headers: { X-Api-Key: secret } }
                respond: { json: { secret: 42 } }
              - name: unauthorized
                respond: { status: 401, headers: { WWW-Authenticate: ApiKey }, json: { error: true, reason: "Missing API key" } }

          - endpoint: GET /orders
            rules:
              - name: orderNumber
                when: { query: { id: { matches: "^[0-9]{4}$" } } }
                respond: { json: { order: "{{query.id}}" } }
              - name: badOrderNumber
                respond: { status: 400, json: { error: true, reason: "Order numbers have four digits" } }

          - endpoint: GET /evil
            rules:
              - { name: nested, when: { query: { name: { matches: "^(a+)+$" } } }, respond: { text: nested } }
              - { name: other, respond: { text: other } }

          - endpoint: GET /header
            rules:
              - name: echoInHeader
                respond: { headers: { X-Echo: "{{query.v}}" }, text: ok }

          - endpoint: POST /echo
            rules:
              - name: echo
                respond: { json: { name: "{{body.name}}", city: "{{body.address.city}}" } }
        """

    // MARK: Path parameters

    @Test func pathParameterSelectsTheRule() throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("GET", "/users/42")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.json?["id"] as? String == "42")
        #expect(response.json?["name"] as? String == "Douglas")
    }

    @Test func pathParameterIsCapturedForOtherValues() throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("GET", "/users/7")
        #expect(response.status == 404)
        #expect(response.json?["reason"] as? String == "No user 7")
    }

    @Test(arguments: ["/users", "/users/", "/users/42/posts"])
    func pathWithoutExactlyOneParameterSegmentIsNotFound(target: String) throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("GET", target)
        #expect(response.status == 404)
        #expect(response.text == #"{"error":true,"reason":"Not Found"}"#)
    }

    // MARK: Text bodies

    @Test func textBodyIsPlainText() throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("GET", "/hello?name=W%C3%B6rld")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
        #expect(response.text == "Hello, Wörld!")
        #expect(response.header("Content-Length") == String("Hello, Wörld!".utf8.count))
    }

    @Test func placeholderInAHeaderCannotStartAnotherHeader() throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("GET", "/header?v=a%0D%0AX-Injected:%20yes%0D%0A%0D%0Abody")
        #expect(response.status == 200)
        #expect(response.header("X-Echo") == "aX-Injected: yesbody")
        #expect(response.header("X-Injected") == nil)
        #expect(response.text == "ok")
    }

    // MARK: Header conditions

    @Test func headerConditionMatches() throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("GET", "/secret", headers: [("X-Api-Key", "secret")])
        #expect(response.status == 200)
        #expect(response.json?["secret"] as? Int == 42)
    }

    @Test func headerNamesMatchWithoutRegardToCase() throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("GET", "/secret", headers: [("x-api-key", "secret")])
        #expect(response.status == 200)
    }

    @Test(arguments: [[], [("X-Api-Key", "Secret")], [("X-Api-Key", "secret2")], [("X-Other", "secret")]])
    func headerConditionFailsWithoutTheExactValue(headers: [(String, String)]) throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("GET", "/secret", headers: headers)
        #expect(response.status == 401)
        #expect(response.header("WWW-Authenticate") == "ApiKey")
        #expect(response.json?["reason"] as? String == "Missing API key")
    }

    // MARK: Regular expressions

    @Test(arguments: ["0000", "1234", "9876"])
    func regexConditionMatches(id: String) throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("GET", "/orders?id=\(id)")
        #expect(response.status == 200)
        #expect(response.json?["order"] as? String == id)
    }

    @Test(arguments: ["123", "12345", "12a4", "", "١٢٣٤"])
    func regexConditionRejects(id: String) throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("GET", "/orders?id=\(id.queryEncoded)")
        #expect(response.status == 400)
        #expect(response.json?["reason"] as? String == "Order numbers have four digits")
    }

    /// A pattern that backtracking engines take exponential time over: a hostile value of
    /// thousands of characters is answered at once, and the server goes on answering.
    @Test(.timeLimit(.minutes(1))) func regexCannotHangTheServer() throws {
        let server = try TestServer(yaml: Self.yaml)
        let hostile = String(repeating: "a", count: 4000) + "!"
        for _ in 0..<20 {
            let response = try server.sendRaw("GET", "/evil?name=\(hostile)")
            #expect(response.status == 200)
            #expect(response.text == "other")
        }
        #expect(try server.sendRaw("GET", "/evil?name=\(String(repeating: "a", count: 4000))").text == "nested")
    }

    @Test func regexConditionNeedsTheValue() throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("GET", "/orders")
        #expect(response.status == 400)
    }

    // MARK: Body placeholders

    @Test func formFieldsAreDecodedIntoPlaceholders() throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("POST", "/echo", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                          body: Array("name=Ada+Lovelace%2B%22%40&address.city=London".utf8))
        #expect(response.status == 200)
        #expect(response.json?["name"] as? String == "Ada Lovelace+\"@")
        #expect(response.json?["city"] as? String == "London")
    }

    @Test func nestedJSONFieldsFillPlaceholders() throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("POST", "/echo", headers: [("Content-Type", "application/json")],
                                          body: Array(#"{"name":"Ada \"A\" L\u00f6velace","address":{"city":"Lon\ndon"}}"#.utf8))
        #expect(response.status == 200)
        #expect(response.json?["name"] as? String == "Ada \"A\" Lövelace")
        #expect(response.json?["city"] as? String == "Lon\ndon")
    }

    @Test func missingBodyFieldsRenderEmpty() throws {
        let server = try TestServer(yaml: Self.yaml)
        let response = try server.sendRaw("POST", "/echo", headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
        #expect(response.status == 200)
        #expect(response.text == #"{"name":"","city":""}"#)
    }
}
