import Synchronization

/// How far each session's clock was moved forward (`POST /__mishap/clock?session=ID&advance=60s`),
/// in milliseconds; 0 for a session never moved, and for requests without a session.
///
/// Moving a session's clock makes its time-bound things happen as if that time had passed: what
/// Mishap keeps for the session is moved into the past by the offset (`Engine.moveClock`: its
/// state values' expiries, its per-session quota windows; `RuntimeRules.moveClock`: its rules'
/// ttl). Everything a request reads stays in the one monotonic clock, so no request pays for a
/// session's offset, and shared state, shared quotas and other sessions do not move. The offset
/// itself is kept here for whoever judges the session's requests in its own time.
///
/// Bounded like the engine's sessions: at most `limit` sessions keep an offset (the least
/// recently moved are forgotten first). While no session has one, `offset(session:)` is one
/// atomic load.
public final class SessionClocks: Sendable {
    private let offsets = Mutex(SessionTable<Int64>())
    /// How many sessions have an offset: while zero, reads take no lock.
    private let count = Atomic<Int>(0)

    public init() {}

    /// Whether no session's clock is moved (a load, no lock).
    public var isEmpty: Bool { count.load(ordering: .relaxed) == 0 }

    /// The milliseconds `session`'s clock is ahead of the server's; 0 without a session.
    @inline(__always)
    public func offset(session: String?) -> Int64 {
        guard let session, count.load(ordering: .relaxed) != 0 else { return 0 }
        return offsets.withLock { $0.peek(session) } ?? 0
    }

    /// Moves `session`'s clock `milliseconds` further forward (offsets add up); the session's
    /// offset after. At most `limit` sessions keep one.
    @discardableResult
    public func advance(session: String, by milliseconds: Int64, limit: Int) -> Int64 {
        offsets.withLock { table in
            let (sum, overflow) = (table.peek(session) ?? 0).addingReportingOverflow(max(0, milliseconds))
            let total = overflow ? Int64.max : sum
            table.remove(session)
            _ = table.value(for: session, limit: limit) { total }
            count.store(table.count, ordering: .relaxed)
            return total
        }
    }

    /// Forgets `session`'s offset: its clock reads the server's again (what expired stays expired).
    public func reset(session: String) {
        guard !isEmpty else { return }
        offsets.withLock { table in
            table.remove(session)
            count.store(table.count, ordering: .relaxed)
        }
    }

    /// Forgets every session's offset.
    public func removeAll() {
        offsets.withLock { table in
            table = SessionTable()
            count.store(0, ordering: .relaxed)
        }
    }
}

extension Engine {
    /// Moves what this engine keeps for `session` `milliseconds` into the past, as if that time
    /// had passed for it alone: its state values set for a while (`for:`) come closer to their
    /// end, and its quota windows counted per session (of the files' rules and of rules added at
    /// runtime) let go of the requests that left them.
    /// The shared state, quotas counted by a header or query value, and other sessions' are
    /// untouched.
    public func moveClock(session: String, by milliseconds: Int64) {
        guard milliseconds > 0 else { return }
        state?.moveClock(session: session, by: milliseconds)
        var seen: [ObjectIdentifier] = []
        // The files' endpoints, and those of rules added at runtime (as this engine evaluates them).
        var all = endpoints
        for entry in runtime?.list(now: options.clock()) ?? [] {
            all += entry.endpoints(forState: state?.generation) ?? []
        }
        for endpoint in all {
            for quota in [endpoint.quota].compactMap({ $0 }) + endpoint.rules.compactMap(\.quota) where quota.key == .session {
                // A counter may be shared by rules (one quota object per declaration).
                let identity = ObjectIdentifier(quota.counter)
                guard !seen.contains(identity) else { continue }
                seen.append(identity)
                quota.counter.moveClock(key: session, by: milliseconds)
            }
        }
    }
}
