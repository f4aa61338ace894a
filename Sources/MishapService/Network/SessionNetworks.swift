import MishapEngine
import Synchronization

/// The network profile each session set at runtime (`PUT /__mishap/network?session=ID`,
/// `session.setNetwork(.edge)`): kept by the service, so it outlives reloads; bounded like the
/// sessions' other settings, in two generations of at most half of `--max-sessions` each (the
/// least recently set forgotten first). While no session has one, looking costs one atomic load.
final class SessionNetworks: Sendable {
    /// A session's profile, from when it was set.
    struct Setting: Sendable {
        let profile: NetworkProfile
        /// When it was set, on the server's clock (milliseconds).
        let setAt: Int64
        /// When it ends by itself (`?for=`), on the same clock; nil: when removed.
        let endsAt: Int64?

        /// When the session's offline window closes; nil for a profile with none.
        var offlineUntil: Int64? { profile.offlineMilliseconds.map { setAt + Int64($0) } }

        /// Whether the offline window is open at `now`.
        func isOffline(now: Int64) -> Bool {
            guard let until = offlineUntil else { return false }
            return now < until
        }
    }

    private struct Table {
        var current: [String: Setting] = [:]
        var previous: [String: Setting] = [:]
        var count: Int { current.count + previous.count }
    }

    private let table = Mutex(Table())
    /// How many sessions have a profile: while zero, answers are not looked at.
    private let setCount = Atomic<Int>(0)

    /// Whether some session has a profile (a load, no lock).
    @inline(__always)
    var isEmpty: Bool { setCount.load(ordering: .relaxed) == 0 }

    /// `session`'s profile at `now`, or nil (one whose `?for=` ran out is forgotten here).
    func setting(session: String, now: Int64) -> Setting? {
        guard !isEmpty else { return nil }
        return table.withLock { table in
            guard let setting = table.current[session] ?? table.previous[session] else { return nil }
            if let endsAt = setting.endsAt, now >= endsAt {
                table.current[session] = nil
                table.previous[session] = nil
                setCount.store(table.count, ordering: .relaxed)
                return nil
            }
            return setting
        }
    }

    /// Sets `session`'s profile from `now`, for `milliseconds` or (nil) until removed; returns
    /// the setting in force.
    @discardableResult
    func set(_ profile: NetworkProfile, session: String, milliseconds: Int?, now: Int64, limit: Int) -> Setting {
        let setting = Setting(profile: profile, setAt: now, endsAt: milliseconds.map { now + Int64($0) })
        table.withLock { table in
            table.current[session] = nil
            table.previous[session] = nil
            if table.current.count >= max(1, limit / 2) {
                table.previous = table.current
                table.current = [:]
            }
            table.current[session] = setting
            setCount.store(table.count, ordering: .relaxed)
        }
        return setting
    }

    /// Removes `session`'s profile, or (nil) every session's; returns whether there was one.
    @discardableResult
    func remove(session: String?) -> Bool {
        table.withLock { table in
            let had: Bool
            if let session {
                had = table.current.removeValue(forKey: session) != nil || table.previous.removeValue(forKey: session) != nil
            } else {
                had = table.count > 0
                table = Table()
            }
            setCount.store(table.count, ordering: .relaxed)
            return had
        }
    }
}
