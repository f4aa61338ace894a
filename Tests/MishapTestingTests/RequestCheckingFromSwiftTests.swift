import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTesting
import MishapTestSupport
import Testing

/// Request checking from MishapTesting (`MishapOptions.openAPI`): a body the description does
/// not allow gets 400 listing its problems before any rule, `mishap.requests` shows them, and
/// a body that fits reaches the rules; a broken description stops the server from starting.
@Suite struct RequestCheckingFromSwiftTests {
    static let description = """
        openapi: 3.0.3
        info: { title: Accounts, version: "1" }
        paths:
          /accounts:
            post:
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [email]
                      properties:
                        email: { type: string, format: email }
                        age: { type: integer, minimum: 0 }
              responses:
                "201": { description: made }
        """

    static let yaml = """
        endpoint: POST /accounts
        rules:
          - name: made
            respond: { status: 201, json: { made: true } }
        """

    static func post(_ mishap: RunningMishap, _ session: MishapSession, _ json: String) async throws -> (Int, Data) {
        var request = URLRequest(url: mishap.url("/accounts"))
        request.httpMethod = "POST"
        request.httpBody = Data(json.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (data, response) = try await URLSession(configuration: session.configuration).data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    @Test func aBodyTheDescriptionDoesNotAllowIsAnswered400WithItsProblems() async throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("accounts.yaml", Self.description)
        try await Mishap.withServer(scenarios: .yaml(Self.yaml), options: MishapOptions(openAPI: path)) { mishap in
            let session = mishap.session()
            let (status, body) = try await Self.post(mishap, session, #"{"email": 42, "age": -1}"#)
            #expect(status == 400)
            let text = String(decoding: body, as: UTF8.self)
            #expect(text.contains("/email: expected a string"), "\(text)")
            #expect(text.contains("/age"), "\(text)")
            let refused = try #require(mishap.requests(session: session).last)
            #expect(refused.status == 400 && refused.rule == nil)
            #expect(refused.contractProblems.count == 2, "\(refused.contractProblems)")

            let (made, _) = try await Self.post(mishap, session, #"{"email": "ann@example.com", "age": 30}"#)
            #expect(made == 201)
            let answered = try #require(mishap.requests(session: session).last)
            #expect(answered.rule == "made" && answered.contractProblems.isEmpty)
        }
    }

    @Test func aBrokenDescriptionStopsTheStart() async throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("swagger.yaml", "swagger: \"2.0\"\ninfo: { title: Old, version: \"1\" }\npaths: {}\n")
        await #expect(throws: (any Error).self) {
            try await Mishap.withServer(scenarios: .yaml(Self.yaml), options: MishapOptions(openAPI: path)) { _ in }
        }
    }
}
