#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Time that only moves forward, whatever the wall clock does: for durations (state that
/// expires, rate-limit windows), never for dates.
public enum MonotonicClock {
    /// Milliseconds since an arbitrary moment (the machine's boot), steady across wall-clock changes.
    public static func milliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Nanoseconds since the same moment: for the request log's durations, read twice per
    /// request, without `ContinuousClock`'s 128-bit arithmetic.
    public static func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
