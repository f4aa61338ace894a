import MishapEngine
@testable import MishapService
import Testing

/// The Retry-After check's bookkeeping on its own, without sockets: which observations it keeps
/// when full (the oldest go first), and how much work one request costs, counted rather than
/// timed: the entries a request visits, and whether it takes the tracker's lock.
@Suite(.onBlockingThreads) struct RetryTrackerTests {
    /// An answer of `GET /x` carrying `Retry-After: seconds` (nil: an answer without it).
    static func plan(retryAfter seconds: String?, delay: Int = 0) -> ResponsePlan {
        ResponsePlan(status: seconds == nil ? 200 : 503,
                     headers: seconds.map { [Field("retry-AFTER", $0)] } ?? [Field("Content-Type", "text/plain")],
                     delayMilliseconds: delay,
                     bookkeeping: ResponsePlan.Bookkeeping(endpoint: "GET /x", rule: seconds == nil ? "ok" : "busy"))
    }

    /// Observes one request of `session` at `now` (milliseconds).
    static func request(_ tracker: RetryTracker, _ session: String?, at now: Int64, retryAfter: String? = nil,
                        endpoint: String = "GET /x", delay: Int = 0) {
        tracker.observe(session: session, endpoint: endpoint, now: now, plan: plan(retryAfter: retryAfter, delay: delay))
    }

    /// The sessions of the observations, in the order listed, with `+` for a finished one.
    static func listed(_ tracker: RetryTracker) -> [String] {
        tracker.observations().map { ($0.session ?? "-") + ($0.nextRequestAt == nil ? "" : "+") }
    }

    /// Full, the tracker forgets the answer that has waited longest for its client, and keeps
    /// only the last `capacity` finished observations, oldest listed first.
    @Test func evictsTheOldestFirst() {
        let tracker = RetryTracker(capacity: 3)
        for (index, session) in ["a", "b", "c"].enumerated() {
            Self.request(tracker, session, at: Int64(index), retryAfter: "1")
        }
        Self.request(tracker, "d", at: 10, retryAfter: "1")
        #expect(Self.listed(tracker) == ["b", "c", "d"])
        Self.request(tracker, "a", at: 11)  // its answer was forgotten: nothing to close
        #expect(Self.listed(tracker) == ["b", "c", "d"])
        // A new Retry-After for a waiting session closes its first one and waits anew, newest.
        Self.request(tracker, "b", at: 12, retryAfter: "1")
        #expect(Self.listed(tracker) == ["b+", "c", "d", "b"])
        Self.request(tracker, "e", at: 13, retryAfter: "1")
        #expect(Self.listed(tracker) == ["b+", "d", "b", "e"])
        for (index, session) in ["d", "b", "e"].enumerated() {
            Self.request(tracker, session, at: 20 + Int64(index))
        }
        #expect(Self.listed(tracker) == ["d+", "b+", "e+"])
        #expect(tracker.observations(session: "b").map { [$0.answeredAt, $0.nextRequestAt] } == [[12, 21]])
    }

    /// The figures of one observation: delay-seconds and HTTP dates, the answer's own delay, a
    /// session's own and the shared (no session) key, per endpoint.
    @Test func recordsExactFigures() throws {
        let tracker = RetryTracker(capacity: 10)
        Self.request(tracker, "s", at: 1_000, retryAfter: "2", delay: 500)
        Self.request(tracker, nil, at: 1_000, retryAfter: "Thu, 01 Jan 1970 00:00:05 GMT")
        Self.request(tracker, "s", at: 1_200, endpoint: "GET /other")  // another endpoint: no return
        Self.request(tracker, "s", at: 2_000)
        Self.request(tracker, nil, at: 7_000)
        let observations = tracker.observations()
        try #require(observations.count == 2)
        let early = observations[0]
        #expect(early.session == "s" && early.endpoint == "GET /x" && early.rule == "busy" && early.status == 503)
        #expect(early.retryAfter == "2" && early.answeredAt == 1_500 && early.allowedAt == 3_500)
        #expect(early.nextRequestAt == 2_000 && early.waitedMilliseconds == 500 && early.honoured == false)
        let dated = observations[1]
        #expect(dated.session == nil && dated.allowedAt == 5_000 && dated.requiredMilliseconds == 4_000)
        #expect(dated.nextRequestAt == 7_000 && dated.honoured == true)
        #expect(tracker.observations(session: "s", endpoint: "GET /other").isEmpty)

        tracker.clear(session: "s")
        #expect(tracker.observations().map(\.session) == [nil])
        Self.request(tracker, "t", at: 8_000, retryAfter: "1")
        tracker.clear(session: "t")
        Self.request(tracker, "t", at: 9_000)  // forgotten by the reset: nothing to close
        #expect(tracker.observations().map(\.session) == [nil])
        tracker.clear()
        #expect(tracker.observations().isEmpty)
    }

    /// The work of one request does not grow with the table: with 100 or 20,000 answers
    /// waiting, evicting the oldest, closing an observation and passing by visit the same few
    /// entries. (The count stands in for time: a scan of the table would visit thousands.)
    @Test func workPerRequestDoesNotGrowWithTheTable() {
        func visits(capacity: Int) -> Int {
            let tracker = RetryTracker(capacity: capacity)
            for index in 0..<capacity {
                Self.request(tracker, "filler\(index)", at: Int64(index), retryAfter: "1")
            }
            let before = tracker.entriesVisited
            for index in 0..<1_000 {
                let now = Int64(capacity + index)
                Self.request(tracker, "new\(index)", at: now, retryAfter: "1")  // evicts the oldest
                Self.request(tracker, "new\(index)", at: now, retryAfter: "1")  // closes it, waits anew
                Self.request(tracker, "other\(index)", at: now)  // nothing to do
            }
            let visited = tracker.entriesVisited - before
            // Still full, of the newest answers: the oldest 1,000 went first.
            let observations = tracker.observations()
            #expect(observations.filter { $0.nextRequestAt == nil }.count == capacity)
            #expect(observations.filter { $0.nextRequestAt != nil }.count == min(capacity, 1_000))
            #expect(tracker.observations(session: "filler999").isEmpty)
            #expect(tracker.observations(session: "filler1000").count == (capacity > 1_000 ? 1 : 0))
            #expect(tracker.observations(session: "new0").count == (capacity > 1_000 ? 2 : 0))
            #expect(tracker.observations(session: "new999").count == 2)
            return visited
        }
        let small = visits(capacity: 100)
        let large = visits(capacity: 20_000)
        #expect(small == large)
        #expect(large <= 1_000 * 10, "entries visited for 1,000 rounds: \(large)")
    }

    /// A request without `Retry-After`, whose session and endpoint wait for nothing, leaves the
    /// tracker's lock alone even while thousands of other answers are waiting; a returning
    /// client takes it once.
    @Test func passingRequestsTakeNoLock() {
        let tracker = RetryTracker(capacity: 5_000)
        for index in 0..<5_000 {
            Self.request(tracker, "waiting\(index)", at: Int64(index), retryAfter: "1")
        }
        let before = tracker.lockAcquisitions
        for index in 0..<1_000 {
            Self.request(tracker, "passing\(index)", at: 6_000)
            Self.request(tracker, "waiting\(index)", at: 6_000, endpoint: "GET /elsewhere")
        }
        #expect(tracker.lockAcquisitions == before)
        Self.request(tracker, "waiting7", at: 6_000)
        #expect(tracker.lockAcquisitions == before + 1)
        #expect(tracker.observations(session: "waiting7").first?.nextRequestAt == 6_000)
    }
}
