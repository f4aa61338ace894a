import Testing
@testable import MishapEngine

/// `ResponsePlan`'s public initializer, which hands its arguments to the memberwise one: each
/// argument lands in its own field, and the fields it does not take start empty.
@Suite struct ResponsePlanTests {
    @Test func everyArgumentLandsInItsOwnField() {
        let change = StateChange(name: "loggedIn", from: .boolean(false), to: .boolean(true), milliseconds: 500)
        let plan = ResponsePlan(
            status: 503, headers: [Field("Retry-After", "17")], body: Array("down".utf8),
            delayMilliseconds: 250, hang: true, dribble: Dribble(chunks: 3, milliseconds: 900), fault: .truncate,
            endpoint: "GET /login", rule: "maintenance", upstream: "http://127.0.0.1:9", stateChanges: [change])
        #expect(plan.status == 503)
        #expect(plan.headers.map(\.name) == ["Retry-After"] && plan.headers.map(\.value) == ["17"])
        #expect(plan.body == Array("down".utf8))
        #expect(plan.delayMilliseconds == 250)
        #expect(plan.hang)
        #expect(plan.dribble == Dribble(chunks: 3, milliseconds: 900))
        #expect(plan.fault == .truncate)
        #expect(plan.endpoint == "GET /login")
        #expect(plan.rule == "maintenance")
        #expect(plan.upstream == "http://127.0.0.1:9")
        #expect(plan.stateChanges.map(\.name) == ["loggedIn"] && plan.stateChanges.first?.milliseconds == 500)
        #expect(plan.prepared == nil && plan.warning == nil && plan.runtimeRule == nil && plan.note == nil)
        #expect(plan.completionTag == 0)
    }

    @Test func aStatusAloneLeavesEverythingElseEmpty() {
        let plan = ResponsePlan(status: 204)
        #expect(plan.status == 204 && plan.headers.isEmpty && plan.body.isEmpty)
        #expect(plan.delayMilliseconds == 0 && !plan.hang && plan.dribble == nil && plan.fault == nil)
        #expect(plan.endpoint == nil && plan.rule == nil && plan.upstream == nil && plan.stateChanges.isEmpty)
        #expect(plan.prepared == nil && plan.warning == nil && plan.runtimeRule == nil && plan.note == nil)
        #expect(plan.completionTag == 0)
    }
}
