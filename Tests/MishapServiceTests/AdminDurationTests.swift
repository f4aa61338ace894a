import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// Durations in admin calls: a bare number is seconds everywhere (`ttl`, and the state call's
/// `"for"`, as a number or as text), and a unit may be given (`500ms`, `30s`, `2m`); a scenario
/// file's bare number stays milliseconds.
@Suite(.onBlockingThreads) struct AdminDurationTests {
    static let yaml = """
        state:
          outage: false
        endpoint: GET /s
        rules:
          - name: down
            when: { state: { outage: true } }
            respond: { status: 503, text: down }
          - name: short
            when: { query: { short: "yes" } }
            set: { outage: { value: true, for: 30 } }
            respond: { text: set }
          - name: up
            respond: { text: up }
        """

    /// The `forMs` of the one change a state call made.
    static func forMs(_ answer: ClientResponse) -> Int? {
        ((answer.json?["changes"] as? [[String: Any]])?.first)?["forMs"] as? Int
    }

    @Test(arguments: [
        (#"{"outage": {"value": true, "for": 30}}"#, 30_000),
        (#"{"outage": {"value": true, "for": "30"}}"#, 30_000),
        (#"{"outage": {"value": true, "for": 0.5}}"#, 500),
        (#"{"outage": {"value": true, "for": "500ms"}}"#, 500),
        (#"{"outage": {"value": true, "for": "2m"}}"#, 120_000),
    ])
    func stateForIsSecondsWhenBare(body: String, milliseconds: Int) async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let answer = try await harness.send("POST", "/__mishap/state", body: Data(body.utf8))
        #expect(answer.status == 200, "\(answer.text)")
        #expect(Self.forMs(answer) == milliseconds, "\(answer.text)")
        let expires = try #require(((answer.json?["state"] as? [String: Any])?["outage"] as? [String: Any])?["expiresInMs"] as? Int)
        #expect(expires <= milliseconds, "\(answer.text)")
    }

    /// A bad `for` names the rule of bare numbers.
    @Test func badStateForIsRefused() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let answer = try await harness.send("POST", "/__mishap/state", body: Data(#"{"outage": {"value": true, "for": "soon"}}"#.utf8))
        #expect(answer.status == 400)
        #expect(answer.text.contains("'for' must be a duration in seconds, like 30 or '500ms'"), "\(answer.text)")
    }

    /// `ttl` takes a unit too; bare, it is seconds as before.
    /// (The bound allows a loaded machine's stall between adding and answering.)
    @Test(arguments: [("ttl=2m", 120_000), ("ttl=90", 90_000), ("ttl=45000ms", 45_000)])
    func ttlTakesUnits(query: String, milliseconds: Int) async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let added = try await harness.send("POST", "/__mishap/force?endpoint=GET%20/s&rule=down&" + query)
        #expect(added.status == 201, "\(added.text)")
        let expires = try #require(added.json?["expiresInMs"] as? Int, "\(added.text)")
        #expect(expires > milliseconds - 10_000 && expires <= milliseconds, "\(added.text)")
    }

    /// A scenario file's bare number is still milliseconds: the rule's `for: 30` lasts 30 ms.
    @Test func scenarioFilesKeepMilliseconds() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        #expect(try await harness.get("/s?short=yes").text == "set")
        let entry = try #require(try await harness.journal("rule=short").first)
        let changes = try #require(entry["stateChanges"] as? [[String: Any]])
        #expect(changes.first?["forMs"] as? Int == 30, "\(changes)")
    }
}
