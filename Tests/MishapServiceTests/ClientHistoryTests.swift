import MishapEngine
@testable import MishapService
import Synchronization
import Testing

/// The verdict's per-session history on its own, without sockets: bounded per session and in
/// all, never judging on part of the evidence, exact with many sessions recording at once.
@Suite(.onBlockingThreads) struct ClientHistoryTests {
    /// An attempt `GET /x?n=...` of `id`, answered `status` at `time`.
    static func attempt(_ id: UInt64, at time: Int64, status: Int = 503, query: String = "1") -> ClientAttempt {
        ClientAttempt(id: id, time: time, request: Request(method: "GET", path: "/x", query: [Field("n", query)]),
                      plan: ResponsePlan(status: status, bookkeeping: ResponsePlan.Bookkeeping(endpoint: "GET /x", rule: "r")))
    }

    static func kept(_ history: ClientHistory, _ session: String?) -> [UInt64]? {
        guard case .kept(let record) = history.lookup(session: session) else { return nil }
        return record.attempts.items.map(\.id)
    }

    @Test func aSessionKeepsItsLastAttemptsAndCountsTheRestAsDropped() {
        let history = ClientHistory(attemptsPerSession: 3, maxSessions: 10, maxAttempts: 100, shardCount: 1)
        for id in 1...5 { history.record(Self.attempt(UInt64(id), at: Int64(id)), session: "s") }
        #expect(Self.kept(history, "s") == [3, 4, 5])
        guard case .kept(let record) = history.lookup(session: "s") else { Issue.record("not kept"); return }
        #expect(record.dropped == 2)
        // The requests without a session are a session of their own.
        history.record(Self.attempt(9, at: 9), session: nil)
        #expect(Self.kept(history, nil) == [9])
        #expect(Self.kept(history, "s") == [3, 4, 5])
    }

    @Test func theSessionsLeastRecentlyUsedGoFirstAndAreKnownToHaveGone() {
        let history = ClientHistory(attemptsPerSession: 10, maxSessions: 2, maxAttempts: 100, shardCount: 1)
        history.record(Self.attempt(1, at: 1), session: "a")
        history.record(Self.attempt(2, at: 2), session: "b")
        history.record(Self.attempt(3, at: 3), session: "a")   // a is now the most recent
        history.record(Self.attempt(4, at: 4), session: "c")
        #expect(Self.kept(history, "a") == [1, 3])
        #expect(Self.kept(history, "c") == [4])
        guard case .evicted = history.lookup(session: "b") else { Issue.record("b should be known to have gone"); return }
        guard case .none = history.lookup(session: "never") else { Issue.record("an unknown session has nothing"); return }
        // Back, it starts anew, marked as having lost what came before.
        history.record(Self.attempt(5, at: 5), session: "b")
        guard case .kept(let record) = history.lookup(session: "b") else { Issue.record("b is kept again"); return }
        #expect(record.evictedBefore && record.attempts.items.map(\.id) == [5])
    }

    @Test func theAttemptsInAllAreBounded() {
        let history = ClientHistory(attemptsPerSession: 4, maxSessions: 100, maxAttempts: 8, shardCount: 1)
        for session in 0..<5 {
            for id in 0..<4 { history.record(Self.attempt(UInt64(session * 10 + id), at: 0), session: "s\(session)") }
        }
        let kept = (0..<5).compactMap { Self.kept(history, "s\($0)") }
        #expect(kept.reduce(0) { $0 + $1.count } <= 8)
        #expect(Self.kept(history, "s4") == [40, 41, 42, 43])
    }

    @Test func aLongPathIsKeptCutShort() {
        let long = String(repeating: "a", count: 10_000)
        let attempt = ClientAttempt(id: 1, time: 0, request: Request(method: "GET", path: "/" + long, query: [Field("q", long)]),
                                    plan: ResponsePlan(status: 200))
        #expect(attempt.request.utf8.count < 300)
        #expect(attempt.query.isEmpty)
        // Still told apart from another long request.
        let other = ClientAttempt(id: 2, time: 0, request: Request(method: "GET", path: "/" + long, query: [Field("q", long + "b")]),
                                  plan: ResponsePlan(status: 200))
        #expect(attempt.requestHash != other.requestHash)
    }

    @Test func theVerdictDoesNotJudgeOnPartOfTheEvidence() throws {
        let service = try MishapService(source: .yaml("endpoint: GET /x\nrules:\n  - name: busy\n    respond: { status: 400 }\n", name: "x.yaml"))
        for _ in 0..<(ClientHistory.defaultAttemptsPerSession + 1) {
            _ = service.respond(to: Request(method: "GET", path: "/x", headers: [Field("X-Mishap-Session", "many")]))
        }
        let verdict = service.verdict(session: "many")
        #expect(verdict.checks.map(\.name) == VerdictCheck.names)
        #expect(verdict.checks.allSatisfy { $0.passed == nil && $0.summary.contains("let go of") })
        #expect(verdict.passed)
        // With every attempt kept, the same client is judged: a 400 sent again unchanged.
        for _ in 0..<3 { _ = service.respond(to: Request(method: "GET", path: "/x", headers: [Field("X-Mishap-Session", "few")])) }
        let judged = service.verdict(session: "few")
        #expect(judged.checks[4].name == "clientErrorRetry" && judged.checks[4].passed == false)
        #expect(!judged.passed)
    }

    /// Many sessions at once, each its own count of attempts: every attempt lands in its own
    /// session, none lost or doubled.
    @Test func parallelSessionsKeepExactHistories() async {
        let history = ClientHistory(attemptsPerSession: 500, maxSessions: 1_000, maxAttempts: 100_000)
        await withTaskGroup(of: Void.self) { group in
            for session in 0..<32 {
                group.addTask {
                    for index in 0..<200 {
                        history.record(Self.attempt(UInt64(session * 1_000 + index), at: Int64(index)), session: "s\(session)")
                    }
                }
            }
        }
        for session in 0..<32 {
            #expect(Self.kept(history, "s\(session)") == (0..<200).map { UInt64(session * 1_000 + $0) })
        }
    }
}
