import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// `adminToken`: every admin call must present it, over real sockets, and with it clients on
/// other machines may call too; the scenarios themselves never need it.
@Suite(.onBlockingThreads) struct AdminTokenTests {
    static let yaml = """
        endpoint: GET /hello
        rules:
          - name: hello
            respond: { text: hi }
        """
    static let token = "s3cret-Token_42"

    static func harness() throws -> TestServer {
        try TestServer(yaml: yaml, options: ServiceOptions(adminToken: token))
    }

    /// Without a token, or with a wrong one (a prefix, a longer string, another scheme), every
    /// admin endpoint answers 401 with `WWW-Authenticate` and does nothing.
    @Test func missingOrWrongTokenIs401() async throws {
        let harness = try Self.harness()
        _ = try await harness.get("/hello")
        let attempts: [[String: String]] = [
            [:],
            ["Authorization": "Bearer wrong"],
            ["Authorization": "Bearer " + String(Self.token.dropLast())],
            ["Authorization": "Bearer " + Self.token + "x"],
            ["Authorization": "Basic " + Self.token],
            ["Authorization": Self.token],
            ["X-Mishap-Admin-Token": "wrong"],
            ["X-Mishap-Admin-Token": Self.token.uppercased()],
        ]
        for headers in attempts {
            for (method, path) in [("GET", "health"), ("GET", "requests"), ("POST", "reset"), ("POST", "reload"), ("GET", "nope")] {
                let response = try await harness.send(method, "/__mishap/" + path, headers: headers)
                #expect(response.status == 401, "\(method) \(path) with \(headers)")
                #expect(response.header("WWW-Authenticate") == #"Bearer realm="mishap admin""#)
                #expect(response.json?["error"] as? Bool == true)
            }
        }
        let missing = try await harness.send("GET", "/__mishap/health")
        #expect((missing.json?["reason"] as? String)?.contains("Authorization: Bearer TOKEN") == true)
        // The refused resets cleared nothing (admin calls themselves are not journaled).
        let journal = harness.service.journal.entries().entries.map(\.path)
        #expect(journal == ["/hello"])
    }

    /// The token works as a bearer token (any case of "Bearer") and in `X-Mishap-Admin-Token`.
    @Test func rightTokenIsAccepted() async throws {
        let harness = try Self.harness()
        _ = try await harness.get("/hello")
        for headers in [["Authorization": "Bearer " + Self.token], ["Authorization": "bearer " + Self.token],
                        ["X-Mishap-Admin-Token": Self.token]] {
            let health = try await harness.send("GET", "/__mishap/health", headers: headers)
            #expect(health.status == 200, "\(headers)")
            #expect(health.json?["status"] as? String == "ok")
        }
        let requests = try await harness.send("GET", "/__mishap/requests", headers: ["X-Mishap-Admin-Token": Self.token])
        #expect((requests.json?["requests"] as? [Any])?.count == 1)
        let reset = try await harness.send("POST", "/__mishap/reset", headers: ["Authorization": "Bearer " + Self.token])
        #expect(reset.status == 200)
        #expect(harness.service.journal.entries().entries.isEmpty)
    }

    /// The scenarios answer without the token, as before.
    @Test func scenariosNeedNoToken() async throws {
        let harness = try Self.harness()
        let response = try await harness.get("/hello")
        #expect(response.status == 200)
        #expect(response.text == "hi")
    }

    /// A client on another machine gets 403 without a token set; with one set, it is let in
    /// when it presents the token, and gets 401 when not.
    @Test func remoteClientsNeedTheToken() throws {
        let open = try TestServer(yaml: Self.yaml)
        let health = Request(method: "GET", path: "/__mishap/health", fromLoopback: false)
        #expect(open.service.respond(to: health).status == 403)

        let guarded = try Self.harness()
        #expect(guarded.service.respond(to: health).status == 401)
        let withToken = Request(method: "GET", path: "/__mishap/health",
                                headers: [Field("Authorization", "Bearer " + Self.token)], fromLoopback: false)
        let answer = guarded.service.respond(to: withToken)
        #expect(answer.status == 200)
        #expect(String(decoding: answer.body, as: UTF8.self).contains(#""status":"ok""#))
    }
}
