import Foundation
import MishapEngine
import MishapScenarios
import MishapService
import MishapTestSupport
import Synchronization
import Testing

/// Rules added at runtime that test state, across reloads that move the state's slots: a rule
/// is only ever evaluated against the state store it was compiled for, by the engine a reload
/// replaces (still answering the requests it took) as by the new one.
@Suite(.onBlockingThreads) struct RuntimeRuleReloadTests {
    static let rule = """
        endpoint: GET /x
        rules:
          - name: zero
            when: { state: { x: 0 } }
            respond: { text: zero }
        """

    /// Scenario text declaring `names` as state (in that order, so in those slots), each 1,
    /// then `x: 0`.
    static func scenarios(declaring names: [String]) -> String {
        let declared = (names.map { "\($0): 1" } + ["x: 0"]).joined(separator: ", ")
        return "state: { \(declared) }\nendpoint: GET /other\nrules:\n  - name: other\n    respond: { text: other }\n"
    }

    static func text(_ plan: ResponsePlan) -> String { String(decoding: plan.body, as: UTF8.self) }

    /// The engine answering before a reload keeps evaluating the rule against its own slots
    /// after the reload compiled it again for the new ones: with `x` moved past the old set's
    /// last slot (an index out of range before), and with `x`'s old slot now holding another
    /// value (a wrong answer before).
    @Test(arguments: [(["a", "b"], (0..<50).map { "s\($0)" }), (["a"], ["b", "a"])])
    func theReplacedEngineEvaluatesItsOwnCompilation(before: [String], after: [String]) async throws {
        let harness = try TestServer(yaml: Self.scenarios(declaring: before))
        let service = harness.service
        guard case .success = service.addRules(yaml: Self.rule) else { Issue.record("the rule was refused"); return }
        // The engine in force now, as a request that started before the reload holds it.
        let old = service.scenarios.makeEngine(runtime: service.runtime)
        #expect(Self.text(old.respond(to: Request(method: "GET", path: "/x"))) == "zero")

        try service.reload(yaml: Self.scenarios(declaring: after), name: "t.yaml")
        #expect(Self.text(old.respond(to: Request(method: "GET", path: "/x"))) == "zero")
        #expect(try await harness.get("/x").text == "zero")
        #expect(Self.text(service.scenarios.makeEngine(runtime: service.runtime).respond(to: Request(method: "GET", path: "/x"))) == "zero")
    }

    /// The issue as it was found: clients call a runtime rule's endpoint while a file declaring
    /// 50 other state values is added and removed with reloads, and rules are added and
    /// deleted meanwhile. Every answer is the rule's (its test `x == 0` always holds), and the
    /// server lives.
    @Test func clientsReloadsAndRuleChangesTogether() async throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("main.yaml", Self.scenarios(declaring: []))
        let harness = try TestServer(directory: folder.path)
        let added = try await harness.send("POST", "/__mishap/rules", body: Data(Self.rule.utf8))
        #expect(added.status == 201, "\(added.text)")

        let run = Tallies()
        let port = harness.port, service = harness.service, path = folder.path
        let many = (["state:"] + (0..<50).map { "  a\($0): 1" }).joined(separator: "\n") + "\n"
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await onOwnThread {
                        do {
                            let connection = try RawHTTPConnection(port: port, timeoutSeconds: 10)
                            while !run.stop.load(ordering: .relaxed) {
                                try connection.sendRequest("GET", "/x", headers: [("Host", "127.0.0.1")])
                                let answer = try connection.readResponse()
                                if answer.status != 200 || answer.text != "zero" {
                                    run.wrong.withLock { $0.append("\(answer.status) \(answer.text)") }
                                }
                                run.answered.wrappingAdd(1, ordering: .relaxed)
                            }
                        } catch {
                            run.wrong.withLock { $0.append("\(error)") }
                        }
                    }
                }
            }
            // Rules of another session that test state, added and deleted while the
            // declarations flip.
            group.addTask {
                try await onOwnThread {
                    var round = 0
                    while !run.stop.load(ordering: .relaxed) {
                        round += 1
                        let yaml = "endpoint: GET /y\(round % 5)\nrules:\n  - name: y\n    when: { state: { x: 0 } }\n    respond: { text: y }\n"
                        if case .success(let entry) = service.addRules(yaml: yaml, session: "churn") {
                            _ = service.runtime.remove(id: entry.id)
                        }
                    }
                }
            }
            group.addTask {
                try await onOwnThread {
                    defer { run.stop.store(true, ordering: .relaxed) }
                    let deadline = ContinuousClock.now + .seconds(2)
                    while ContinuousClock.now < deadline {
                        // Sorted before main.yaml: its 50 values take the first slots.
                        try Data(many.utf8).write(to: URL(fileURLWithPath: path + "/a-many.yaml"))
                        try service.reload()
                        try FileManager.default.removeItem(atPath: path + "/a-many.yaml")
                        try service.reload()
                        run.reloads.wrappingAdd(2, ordering: .relaxed)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(run.wrong.withLock { $0 }.isEmpty, "\(run.wrong.withLock { Array($0.prefix(5)) })")
        #expect(run.answered.load(ordering: .relaxed) > 0 && run.reloads.load(ordering: .relaxed) > 10,
                "\(run.answered.load(ordering: .relaxed)) answers, \(run.reloads.load(ordering: .relaxed)) reloads")
        #expect(try await harness.get("/x").text == "zero")
    }
}

/// What the clients, the rule churn and the reloads of a run share.
private final class Tallies: Sendable {
    let stop = Atomic<Bool>(false)
    let wrong = Mutex<[String]>([])
    let answered = Atomic<Int>(0)
    let reloads = Atomic<Int>(0)
}
