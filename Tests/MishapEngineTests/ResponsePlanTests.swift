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
            destination: .url("http://127.0.0.1:9"),
            bookkeeping: ResponsePlan.Bookkeeping(endpoint: "GET /login", rule: "maintenance", stateChanges: [change]))
        #expect(plan.status == 503)
        #expect(plan.headers.map(\.name) == ["Retry-After"] && plan.headers.map(\.value) == ["17"])
        #expect(plan.body == Array("down".utf8))
        #expect(plan.delayMilliseconds == 250)
        #expect(plan.hang)
        #expect(plan.dribble == Dribble(chunks: 3, milliseconds: 900))
        #expect(plan.fault == .truncate)
        #expect(plan.destination == .url("http://127.0.0.1:9"))
        #expect(plan.bookkeeping.endpoint == "GET /login")
        #expect(plan.bookkeeping.rule == "maintenance")
        #expect(plan.bookkeeping.stateChanges.map(\.name) == ["loggedIn"] && plan.bookkeeping.stateChanges.first?.milliseconds == 500)
        #expect(plan.prepared == nil && plan.heldMemory == nil)
        #expect(plan.bookkeeping.warning == nil && plan.bookkeeping.runtimeRule == nil && plan.bookkeeping.note == nil)
        #expect(plan.bookkeeping.upstream == nil && plan.bookkeeping.completionTag == 0)
    }

    @Test func aStatusAloneLeavesEverythingElseEmpty() {
        let plan = ResponsePlan(status: 204)
        #expect(plan.status == 204 && plan.headers.isEmpty && plan.body.isEmpty)
        #expect(plan.delayMilliseconds == 0 && !plan.hang && plan.dribble == nil && plan.fault == nil)
        #expect(plan.destination == .here && plan.destination.isHere)
        #expect(plan.bookkeeping.endpoint == nil && plan.bookkeeping.rule == nil && plan.bookkeeping.stateChanges.isEmpty)
        #expect(plan.prepared == nil && plan.bookkeeping.warning == nil && plan.bookkeeping.runtimeRule == nil)
        #expect(plan.bookkeeping.note == nil && plan.bookkeeping.upstream == nil && plan.bookkeeping.completionTag == 0)
    }

    /// A plan passed on to an upstream carries nothing of its own onto the answer.
    @Test func aPlanPassedOnHasNoDeliveryOfItsOwn() {
        let plan = ResponsePlan.passedOn(to: .serverUpstream)
        #expect(plan.destination == .serverUpstream && !plan.destination.isHere)
        #expect(plan.headers.isEmpty && plan.body.isEmpty && plan.delayMilliseconds == 0 && !plan.hang)
        #expect(plan.dribble == nil && plan.fault == nil && plan.prepared == nil)
        #expect(plan.bookkeeping.endpoint == nil && plan.bookkeeping.rule == nil)
    }
}
