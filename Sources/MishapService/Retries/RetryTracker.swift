import MishapEngine
import Synchronization
import MishapSupport

/// How a client followed one `Retry-After`: the answer that carried it, and the client's next
/// request to the same endpoint in the same session.
public struct RetryObservation: Sendable {
    public var session: String?
    public var endpoint: String
    /// The rule whose answer carried `Retry-After`.
    public var rule: String?
    public var status: Int
    /// The header as sent: delay-seconds (`2`) or an HTTP date.
    public var retryAfter: String
    /// When the answer was sent, in milliseconds since 1970 (after any delay of its own).
    public var answeredAt: Int64
    /// The earliest moment the client was allowed back, in milliseconds since 1970.
    public var allowedAt: Int64
    /// When the next request came; nil while the client has not come back.
    public var nextRequestAt: Int64?

    /// Milliseconds between the answer and the next request.
    public var waitedMilliseconds: Int64? { nextRequestAt.map { $0 - answeredAt } }
    /// Milliseconds the header asked for.
    public var requiredMilliseconds: Int64 { allowedAt - answeredAt }
    /// True when the client waited long enough, false when it came back too early, nil while
    /// it has not come back.
    public var honoured: Bool? { nextRequestAt.map { $0 >= allowedAt } }
}

/// Watches every answer carrying `Retry-After` and the client's next request to the same
/// endpoint in the same session (requests without a session share one), and records whether
/// the client waited as told. Memory is bounded: at most `capacity` answers wait for their
/// client (when full, the one waiting longest is forgotten) and `capacity` finished
/// observations are kept (the oldest go first).
///
/// Each request costs O(1) whatever the count. A request that carries no `Retry-After` and whose
/// session and endpoint await nothing takes no lock shared by all requests: an atomic count
/// skips everything while nothing waits, and otherwise one shard of the waiting keys is looked
/// at, under its own lock.
public final class RetryTracker: Sendable {
    public let capacity: Int

    struct Key: Hashable, Sendable {
        let session: String?
        let endpoint: String
        /// The hash of both, worked out once: a request answered with `Retry-After` looks its
        /// key up in the waiting table and its key set three or four times, and each lookup
        /// hashed the endpoint's name and the session again (about 300 instructions each).
        private let hash: Int

        init(session: String?, endpoint: String) {
            self.session = session
            self.endpoint = endpoint
            var hasher = Hasher()
            hasher.combine(session)
            hasher.combine(endpoint)
            hash = hasher.finalize()
        }

        static func == (left: Key, right: Key) -> Bool {
            left.hash == right.hash && left.session == right.session && left.endpoint == right.endpoint
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(hash)
        }
    }
    private struct State {
        /// Answers awaiting their client, in the order they were given.
        var waiting = InsertionOrderedTable<Key, RetryObservation>()
        var finished: RecentItems<RetryObservation>
    }
    private let state: Mutex<State>
    /// The keys of `state.waiting`, changed only under `state`'s lock, readable without it.
    private let waitingKeys = ShardedKeySet<Key>()
    /// How many answers await their client's return; while zero, requests skip even the shards.
    private let waitingCount = Atomic<Int>(0)
    private let lockCount = Atomic<Int>(0)

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        state = Mutex(State(finished: RecentItems(capacity: self.capacity)))
    }

    /// How many times requests took the lock shared by all requests (for tests).
    var lockAcquisitions: Int { lockCount.load(ordering: .relaxed) }
    /// How many table entries requests have visited so far (for tests that count work).
    var entriesVisited: Int { state.withLock { $0.waiting.slotsVisited } }

    /// Notes a request to `endpoint` arriving at `now` and the plan answering it.
    func observe(session: String?, endpoint: String, now: Int64, plan: ResponsePlan) {
        let retryAfter = plan.fault == nil && !plan.hang ? Self.retryAfter(in: plan.headers) : nil
        guard retryAfter != nil || waitingCount.load(ordering: .acquiring) > 0 else { return }
        let key = Key(session: session, endpoint: endpoint)
        guard retryAfter != nil || waitingKeys.contains(key) else { return }
        let answer = retryAfter.map { retryAfter in
            let answeredAt = now + Int64(plan.delayMilliseconds)
            return RetryObservation(session: session, endpoint: endpoint, rule: plan.bookkeeping.rule, status: plan.status,
                                    retryAfter: retryAfter, answeredAt: answeredAt,
                                    allowedAt: Self.allowedAt(retryAfter, answeredAt: answeredAt))
        }
        lockCount.add(1, ordering: .relaxed)
        state.withLock { state in
            if var open = state.waiting.removeValue(forKey: key) {
                open.nextRequestAt = now
                state.finished.append(open)
                if answer == nil { waitingKeys.remove(key) }
            }
            if let answer {
                if state.waiting.count >= capacity, let oldest = state.waiting.removeOldest() {
                    waitingKeys.remove(oldest.key)
                }
                state.waiting.append(key, answer)
                waitingKeys.insert(key)
            }
            waitingCount.store(state.waiting.count, ordering: .releasing)
        }
    }

    /// The earliest moment, in milliseconds since 1970, a `Retry-After` value sent at
    /// `answeredAt` allows the client back (at once for a value that is neither form).
    static func allowedAt(_ retryAfter: String, answeredAt: Int64) -> Int64 {
        if let seconds = Int64(retryAfter), seconds >= 0 {
            return answeredAt + seconds * 1000
        } else if let date = WallClock.secondsSinceEpoch(httpDate: retryAfter) {
            return date * 1000
        }
        return answeredAt
    }

    /// Every observation, finished ones first (oldest first), then those still waiting.
    public func observations(session: String? = nil, endpoint: String? = nil) -> [RetryObservation] {
        let all = state.withLock { state in
            state.finished.items + state.waiting.values.sorted { $0.answeredAt < $1.answeredAt }
        }
        return all.filter { (session == nil || $0.session == session) && (endpoint == nil || $0.endpoint == endpoint) }
    }

    /// Forgets everything, or one session's observations.
    public func clear(session: String? = nil) {
        state.withLock { state in
            if let session {
                state.finished.keepOnly { $0.session != session }
                for key in state.waiting.removeAll(where: { key, _ in key.session == session }) {
                    waitingKeys.remove(key)
                }
            } else {
                state = State(finished: RecentItems(capacity: capacity))
                waitingKeys.removeAll()
            }
            waitingCount.store(state.waiting.count, ordering: .releasing)
        }
    }

    static func retryAfter(in headers: [Field]) -> String? {
        for header in headers where header.name.utf8.count == 11 && header.name.equalsIgnoringASCIICase("retry-after") {
            return header.value
        }
        return nil
    }
}
