import MishapEngine

/// When the next piece of a stream may go, under a network profile (`NetworkShaping`): at its
/// bandwidth, in pieces of about a tenth of a second's worth, each after the first waiting the
/// profile's per-chunk latency and a jitter drawn for it. A stream of events pulls its bytes
/// through it (`EventStreamBody`); the times are uptime nanoseconds. Touched by one thread at a
/// time (libmicrohttpd's, for the connection).
struct StreamPacer {
    /// Bytes per second; nil: as fast as the socket takes them.
    let rate: Int?
    /// The most bytes one piece holds.
    let pieceBytes: Int
    private let chunkLatencyNanoseconds: UInt64
    private let chunkJitterMilliseconds: Int
    /// When the next piece may go; nil before the first.
    private var nextDue: UInt64?

    /// Nil when the profile neither paces nor waits between pieces.
    init?(_ shaping: NetworkShaping, largestPiece: Int) {
        guard shaping.downBytesPerSecond != nil || shaping.chunkLatencyMilliseconds > 0 || shaping.chunkJitterMilliseconds > 0 else {
            return nil
        }
        rate = shaping.downBytesPerSecond.map { max($0, 1) }
        pieceBytes = rate.map { min(max($0 / 10, 1), largestPiece) } ?? largestPiece
        chunkLatencyNanoseconds = UInt64(max(shaping.chunkLatencyMilliseconds, 0)) * 1_000_000
        chunkJitterMilliseconds = max(shaping.chunkJitterMilliseconds, 0)
    }

    /// Nanoseconds to wait at `now` before the next piece may go; 0: it may go now.
    func wait(now: UInt64) -> UInt64 {
        guard let nextDue, nextDue > now else { return 0 }
        return nextDue - now
    }

    /// Notes a piece of `count` bytes sent at `now`: the next is due when the rate has carried
    /// it, plus the per-chunk latency and a jitter. The schedule is kept (a late piece does not
    /// delay the ones after it), unless the stream fell far behind (it waited for its next
    /// event, or the client did not read): then the rate counts from now, without a burst.
    mutating func sent(_ count: Int, now: UInt64) {
        let due = nextDue ?? now
        var next = now > due + 200_000_000 ? now : due
        if let rate { next += UInt64(count) * 1_000_000_000 / UInt64(rate) }
        next += chunkLatencyNanoseconds
        if chunkJitterMilliseconds > 0 { next += UInt64(Int.random(in: 0...chunkJitterMilliseconds)) * 1_000_000 }
        nextDue = next
    }
}
