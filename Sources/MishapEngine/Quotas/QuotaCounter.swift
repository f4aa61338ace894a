import Synchronization

/// The requests a quota has let through in its window, per key (a session, or the value of a
/// header or query parameter, with one count for requests without one): a sliding window, so a
/// refused client learns exactly when the oldest request leaves it and frees a slot. Refused
/// requests do not count. Keys are bounded like sessions: past `limit` of them the least
/// recently seen are forgotten.
public final class QuotaCounter: Sendable {
    private let windows = Mutex(Windows())

    struct Windows: Sendable {
        var unkeyed = SlidingWindow()
        var keyed = SessionTable<Box>()
    }

    /// A window in a class, so the table's generations share it; touched only under the lock.
    final class Box: @unchecked Sendable {
        var window = SlidingWindow()
    }

    public init() {}

    /// What the quota says of one more request.
    enum Decision {
        /// Let through; `remaining` more fit now, and `resetMilliseconds` from now the oldest
        /// request counted leaves the window.
        case allowed(remaining: Int, resetMilliseconds: Int64)
        /// Refused: a slot frees in `retryMilliseconds`.
        case refused(retryMilliseconds: Int64)
    }

    func take(key: String?, limit: Int, window: Int64, now: Int64, keyLimit: Int) -> Decision {
        windows.withLock { windows in
            if let key {
                let box = windows.keyed.value(for: key, limit: keyLimit) { Box() }
                return box.window.take(limit: limit, window: window, now: now)
            }
            return windows.unkeyed.take(limit: limit, window: window, now: now)
        }
    }

    /// Starts every count over.
    public func reset() {
        windows.withLock { $0 = Windows() }
    }

    /// Moves the times of one key's window `milliseconds` into the past (a session's clock moved
    /// forward): requests that have left the window by then free their slots.
    public func moveClock(key: String, by milliseconds: Int64) {
        windows.withLock { $0.keyed.peek(key)?.window.moveClock(by: milliseconds) }
    }

    /// Starts one key's count over (a session's, for a quota counted per session).
    public func reset(key: String) {
        windows.withLock { $0.keyed.remove(key) }
    }
}

/// The times of the requests let through within the window, oldest first.
struct SlidingWindow {
    private var times: [Int64] = []
    private var start = 0

    mutating func take(limit: Int, window: Int64, now: Int64) -> QuotaCounter.Decision {
        while start < times.count && times[start] <= now - window { start += 1 }
        if start > 32 && start * 2 > times.count {
            times.removeFirst(start)
            start = 0
        }
        let live = times.count - start
        guard live < limit else {
            return .refused(retryMilliseconds: max(1, times[start] + window - now))
        }
        times.append(now)
        return .allowed(remaining: limit - live - 1, resetMilliseconds: times[start] + window - now)
    }

    mutating func moveClock(by milliseconds: Int64) {
        for index in start..<times.count { times[index] = times[index] &- milliseconds }
    }
}
