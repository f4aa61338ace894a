#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Signals taken synchronously: blocked in every thread and waited for by one, so a handler
/// never runs at an arbitrary point of another thread's work.
public struct SignalSet {
    private var set = sigset_t()

    /// Blocks `signals` in the calling thread, and so in every thread it starts afterwards, and
    /// ignores SIGPIPE (a peer that closes early is an error on the write, not a signal). Call it
    /// before starting other threads.
    public init(blocking signals: [Int32]) {
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
    }

    /// Waits for one of the blocked signals and returns it.
    public mutating func wait() -> Int32 {
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        return received
    }

    /// Waits at most `milliseconds` for one of the blocked signals: the signal, or nil when
    /// none came in that time.
    public mutating func wait(milliseconds: Int) -> Int32? {
        let deadline = MonotonicClock.nanoseconds() + Int64(milliseconds) * 1_000_000
        while true {
            let left = max(0, deadline - MonotonicClock.nanoseconds())
            var timeout = timespec(tv_sec: Int(left / 1_000_000_000), tv_nsec: Int(left % 1_000_000_000))
            let received = sigtimedwait(&set, nil, &timeout)
            if received > 0 { return received }
            if errno != EINTR { return nil }
        }
    }
}
