import Foundation
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// `GET` and `POST /__mishap/state`, the state changes in the journal, and what resets and
/// reloads do to state, over real sockets.
@Suite(.onBlockingThreads) struct StateAdminTests {
    static let yaml = """
        state:
          outage: false
          calls: 0
        endpoint: GET /s
        rules:
          - name: down
            when: { state: { outage: true } }
            respond: { status: 503, text: down }
          - name: count
            set: { calls: { increment: 1 } }
            respond: { text: "call {{state.calls}}" }
        """

    static func values(_ answer: [String: Any]) -> [String: Any] {
        (answer["state"] as? [String: Any] ?? [:]).compactMapValues { ($0 as? [String: Any])?["value"] }
    }

    @Test func stateIsReadAndSetPerSession() async throws {
        let clock = ManualClock()
        let harness = try TestServer(yaml: Self.yaml, options: ServiceOptions(engine: EngineOptions(clock: clock.function)))
        #expect(try await harness.get("/s", session: "a").text == "call 1")
        #expect(try await harness.get("/s", session: "a").text == "call 2")
        let a = try await harness.admin("state?session=a")
        #expect(a["session"] as? String == "a")
        #expect(Self.values(a)["calls"] as? Int == 2)
        #expect(Self.values(a)["outage"] as? Bool == false)
        #expect(Self.values(try await harness.admin("state"))["calls"] as? Int == 0, "the shared set is untouched")

        // An outage for session a only, for 1 s.
        let set = try await harness.send("POST", "/__mishap/state?session=a", body: Data(#"{"outage": {"value": true, "for": "1s"}}"#.utf8))
        #expect(set.status == 200, "\(set.text)")
        let changes = try #require(set.json?["changes"] as? [[String: Any]])
        #expect(changes.first?["name"] as? String == "outage" && changes.first?["to"] as? Bool == true && changes.first?["forMs"] as? Int == 1000)
        let outage = try #require((set.json?["state"] as? [String: Any])?["outage"] as? [String: Any])
        #expect(outage["expiresInMs"] as? Int == 1000, "\(outage)")
        #expect(try await harness.get("/s", session: "a").status == 503)
        #expect(try await harness.get("/s", session: "b").text == "call 1")
        clock.advance(999)
        #expect(try await harness.get("/s", session: "a").status == 503)
        clock.advance(1)
        #expect(try await harness.get("/s", session: "a").text == "call 3", "the outage is over")
    }

    @Test func theJournalRecordsEachRequestsChanges() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        _ = try await harness.get("/s", session: "j")
        let entry = try #require(try await harness.journal("session=j").first)
        let changes = try #require(entry["stateChanges"] as? [[String: Any]])
        #expect(changes.count == 1)
        #expect(changes.first?["name"] as? String == "calls")
        #expect(changes.first?["from"] as? Int == 0 && changes.first?["to"] as? Int == 1)
        #expect(changes.first?["forMs"] == nil)
    }

    @Test func resetsStartStateOver() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        for session in ["x", "y"] { _ = try await harness.get("/s", session: session) }
        _ = try await harness.get("/s")
        _ = try await harness.admin("reset?session=x", method: "POST")
        #expect(Self.values(try await harness.admin("state?session=x"))["calls"] as? Int == 0)
        #expect(Self.values(try await harness.admin("state?session=y"))["calls"] as? Int == 1)
        _ = try await harness.admin("reset", method: "POST")
        #expect(Self.values(try await harness.admin("state?session=y"))["calls"] as? Int == 0)
        #expect(Self.values(try await harness.admin("state"))["calls"] as? Int == 0)
    }

    @Test(arguments: [
        (#"{"outag": true}"#, "no state value 'outag' (did you mean 'outage'?)"),
        (#"{"calls": true}"#, "'calls' is an integer"),
        (#"{"outage": {"value": true, "for": "forever"}}"#, "'for' must be a duration"),
        ("not json", "must be a JSON object"),
        ("{}", "must be a non-empty JSON object"),
    ])
    func badChangesAre400AndChangeNothing(body: String, reason: String) async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let answer = try await harness.send("POST", "/__mishap/state?session=z", body: Data(body.utf8))
        #expect(answer.status == 400, "\(answer.text)")
        #expect((answer.json?["reason"] as? String)?.contains(reason) == true, "\(answer.text)")
        #expect(Self.values(try await harness.admin("state?session=z"))["outage"] as? Bool == false)
    }

    @Test func theCallTakesGetAndPostAndItsOneParameter() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let put = try await harness.send("PUT", "/__mishap/state")
        #expect(put.status == 405)
        #expect(put.header("Allow") == "GET, HEAD, POST")
        #expect(try await harness.send("GET", "/__mishap/state?sesion=a").status == 400)
        #expect(try await harness.send("GET", "/__mishap/state?session=").status == 400)
        let none = try TestServer(yaml: "endpoint: GET /n\nrules:\n  - name: a\n    respond: { text: n }\n")
        #expect((try await none.admin("state"))["state"] as? [String: Any] != nil)
        let refused = try await none.send("POST", "/__mishap/state", body: Data(#"{"a": 1}"#.utf8))
        #expect(refused.status == 400)
        #expect(refused.text.contains("declare no state"))
    }

    @Test func aReloadKeepsTheValuesOfUnchangedDeclarations() async throws {
        let folder = try TemporaryFolder()
        let file = try folder.write("s.yaml", Self.yaml)
        let harness = try TestServer(directory: folder.path)
        _ = try await harness.get("/s", session: "r")
        try Self.yaml.replacingOccurrences(of: "text: down", with: "text: still down").write(toFile: file, atomically: true, encoding: .utf8)
        _ = try await harness.admin("reload", method: "POST")
        #expect(try await harness.get("/s", session: "r").text == "call 2")
        try Self.yaml.replacingOccurrences(of: "calls: 0", with: "calls: 10").write(toFile: file, atomically: true, encoding: .utf8)
        _ = try await harness.admin("reload", method: "POST")
        #expect(try await harness.get("/s", session: "r").text == "call 11", "a new initial value starts the value over")
    }
}
