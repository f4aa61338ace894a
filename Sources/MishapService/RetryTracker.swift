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
/// the client waited as told. Memory is bounded: at most `capacity` observations are kept.
public final class RetryTracker: Sendable {
    public let capacity: Int

    private struct Key: Hashable {
        var session: String?
        var endpoint: String
    }
    private struct State {
        var waiting: [Key: RetryObservation] = [:]
        var finished: [RetryObservation] = []
    }
    private let state = Mutex(State())
    /// How many answers await their client's return; while zero, requests skip the lock.
    private let waitingCount = Atomic<Int>(0)

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Notes a request to `endpoint` arriving at `now` and the plan answering it.
    func observe(session: String?, endpoint: String, now: Int64, plan: ResponsePlan) {
        let retryAfter = plan.fault == nil && !plan.hang ? Self.retryAfter(in: plan.headers) : nil
        guard retryAfter != nil || waitingCount.load(ordering: .relaxed) > 0 else { return }
        let key = Key(session: session, endpoint: endpoint)
        state.withLock { state in
            if var open = state.waiting.removeValue(forKey: key) {
                open.nextRequestAt = now
                state.finished.append(open)
                if state.finished.count > capacity { state.finished.removeFirst(state.finished.count - capacity) }
            }
            if let retryAfter {
                let answeredAt = now + Int64(plan.delayMilliseconds)
                let allowedAt: Int64
                if let seconds = Int64(retryAfter), seconds >= 0 {
                    allowedAt = answeredAt + seconds * 1000
                } else if let date = WallClock.secondsSinceEpoch(httpDate: retryAfter) {
                    allowedAt = date * 1000
                } else {
                    allowedAt = answeredAt
                }
                if state.waiting.count >= capacity, state.waiting[key] == nil,
                   let oldest = state.waiting.min(by: { $0.value.answeredAt < $1.value.answeredAt })?.key {
                    state.waiting.removeValue(forKey: oldest)
                }
                state.waiting[key] = RetryObservation(session: session, endpoint: endpoint, rule: plan.rule, status: plan.status,
                                                      retryAfter: retryAfter, answeredAt: answeredAt, allowedAt: allowedAt)
            }
            waitingCount.store(state.waiting.count, ordering: .relaxed)
        }
    }

    /// Every observation, finished ones first (oldest first), then those still waiting.
    public func observations(session: String? = nil, endpoint: String? = nil) -> [RetryObservation] {
        let all = state.withLock { state in
            state.finished + state.waiting.values.sorted { $0.answeredAt < $1.answeredAt }
        }
        return all.filter { (session == nil || $0.session == session) && (endpoint == nil || $0.endpoint == endpoint) }
    }

    /// Forgets everything, or one session's observations.
    public func clear(session: String? = nil) {
        state.withLock { state in
            if let session {
                state.finished.removeAll { $0.session == session }
                state.waiting = state.waiting.filter { $0.key.session != session }
            } else {
                state = State()
            }
            waitingCount.store(state.waiting.count, ordering: .relaxed)
        }
    }

    static func retryAfter(in headers: [Field]) -> String? {
        for header in headers where header.name.utf8.count == 11 && header.name.lowercased() == "retry-after" {
            return header.value
        }
        return nil
    }
}
