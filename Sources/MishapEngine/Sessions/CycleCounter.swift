import Synchronization

/// Counts the requests a cycle has seen: one count shared by requests without a session, and
/// one per session. Exact under concurrency: every request takes a distinct position, with no
/// lost or doubled counts.
///
/// Sessions are bounded: past `limit` of them, the ones not seen for longest are forgotten (and
/// start over if they come back). The most recent `limit / 2` are always kept.
public final class CycleCounter: Sendable {
    private let shared = Atomic<UInt>(0)
    private let sessions = Mutex(SessionCounts())

    public init() {}

    /// Takes the next position, in `0..<length`, of the session's count (the shared one without).
    func next(length: Int, session: String?, limit: Int = EngineOptions.defaultMaxSessions) -> Int {
        let taken: UInt
        if let session {
            taken = sessions.withLock { $0.take(session, limit: limit) }
        } else {
            taken = shared.wrappingAdd(1, ordering: .relaxed).oldValue
        }
        return Int(taken % UInt(length))
    }

    /// The position the session's next request takes (the shared count's without a session), in
    /// `0..<length`, without taking it: for showing where a cycle stands.
    public func position(length: Int, session: String?) -> Int {
        let count = session.map { session in sessions.withLock { $0.peek(session) } } ?? shared.load(ordering: .relaxed)
        return Int(count % UInt(max(1, length)))
    }

    /// Starts every count over.
    public func reset() {
        shared.store(0, ordering: .relaxed)
        sessions.withLock { $0 = SessionCounts() }
    }

    /// Starts one session's count over.
    public func reset(session: String) {
        sessions.withLock { $0.remove(session) }
    }

    /// The sessions whose counts are kept now.
    public var sessionCount: Int {
        sessions.withLock { $0.count }
    }
}
