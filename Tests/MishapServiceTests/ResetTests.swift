import Foundation
import MishapService
import MishapTestSupport
import Testing

/// `POST /__mishap/reset`: cycles start over and the journal empties, for everyone or for one
/// session.
@Suite(.onBlockingThreads) struct ResetTests {
    static let yaml = """
        endpoint: GET /m
        rules:
          - name: maint
            cycle:
              - { status: 500, text: first }
              - { status: 503, text: second }
              - pass
          - name: ok
            respond: { status: 200, text: fine }
        """

    /// What `GET /m` answers for `session`, as "status text".
    func step(_ harness: TestServer, session: String? = nil) async throws -> String {
        let response = try await harness.get("/m", session: session)
        return "\(response.status) \(response.text)"
    }

    /// A reset of everything starts the cycle over and empties the journal.
    @Test func resetAll() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        #expect(try await step(harness) == "500 first")
        #expect(try await step(harness) == "503 second")
        #expect(try await harness.journal().count == 2)

        let answer = try await harness.admin("reset", method: "POST")
        #expect(answer["reset"] as? String == "all")
        #expect(try await harness.journal().isEmpty)

        #expect(try await step(harness) == "500 first")
        #expect(try await step(harness) == "503 second")
        #expect(try await step(harness) == "200 fine")
        // Ids are never reused, not even after a reset.
        #expect(try await harness.journal().map { $0["id"] as? Int } == [3, 4, 5])
    }

    /// `?session=a` starts only session a's cycle over and forgets only its journal entries:
    /// session b and the requests without a session go on where they were.
    @Test func resetOneSession() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        #expect(try await step(harness, session: "a") == "500 first")
        #expect(try await step(harness, session: "a") == "503 second")
        #expect(try await step(harness, session: "b") == "500 first")
        #expect(try await step(harness) == "500 first")

        let answer = try await harness.admin("reset?session=a", method: "POST")
        #expect(answer["reset"] as? String == "session a")
        #expect(try await harness.journal("session=a").isEmpty)
        #expect(try await harness.journal("session=b").count == 1)
        #expect(try await harness.journal().count == 2)

        #expect(try await step(harness, session: "a") == "500 first")
        #expect(try await step(harness, session: "b") == "503 second")
        #expect(try await step(harness) == "503 second")
        #expect(try await harness.journal("session=a").map { $0["id"] as? Int } == [5])
        #expect(try await harness.journal("session=b").map { $0["id"] as? Int } == [3, 6])
    }

    /// An empty session name is refused with 400 and resets nothing.
    @Test func emptySessionIsRefused() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        #expect(try await step(harness) == "500 first")
        let response = try await harness.send("POST", "/__mishap/reset?session=")
        #expect(response.status == 400)
        #expect(response.json?["error"] as? Bool == true)
        #expect(try await step(harness) == "503 second")
        #expect(try await harness.journal().count == 2)
    }
}
