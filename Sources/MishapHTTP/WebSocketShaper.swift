import MishapEngine

/// A WebSocket's outgoing frames under a network profile (`NetworkShaping`): each frame waits
/// the profile's latency, drawn for it (with its jitter), and frames never overtake one
/// another; then its bytes go at the profile's bandwidth, in pieces of about a tenth of a
/// second's worth. The profile's `resetAfterBytes` stops it after that many bytes of frames:
/// the connection then resets (`WebSocketConnection`). Touched only by the WebSocket loop's
/// thread; times are the loop's milliseconds (`MonotonicClock`).
final class WebSocketShaper {
    private let latency: NetworkLatency?
    private let jitterMilliseconds: Int
    /// Bytes per second; nil: as fast as the socket takes them.
    private let rate: Int?
    private let pieceBytes: Int
    /// The bytes of frames sent before the reset; nil: none.
    let resetAt: Int?
    private let random = RandomSource()

    /// Frames waiting for their latency, in order, and how much of the first has gone.
    private var waiting: [(due: Int64, bytes: [UInt8])] = []
    private var firstSent = 0
    /// When the last frame queued is due: a later one is never due before it.
    private var lastDue: Int64 = 0
    /// When the next piece may go at `rate` (microseconds of the loop's clock).
    private var nextPieceMicroseconds: Int64 = 0
    /// Bytes of frames handed on to the socket.
    private(set) var sent = 0
    /// Bytes waiting, for the connection's bound on what a client leaves unread.
    private(set) var waitingBytes = 0

    /// Nil when the profile does nothing to frames. `script`: the frames a fraction of
    /// `resetAfterBytes` is resolved against (the script's `send` list, once).
    init?(_ shaping: NetworkShaping, script: WebSocketScript) {
        let sendBytes = script.send.reduce(0) { $0 + WebSocketFrames.frame(opcode: WebSocketFrames.text, $1.payload).count }
        var resetAt = shaping.resetAfter.map { max($0.bytes(of: sendBytes), 0) }
        if case .fraction? = shaping.resetAfter, sendBytes == 0 { resetAt = nil }
        guard shaping.messageLatency != nil || shaping.messageJitterMilliseconds > 0 || shaping.downBytesPerSecond != nil
                || resetAt != nil else { return nil }
        latency = shaping.messageLatency
        jitterMilliseconds = max(shaping.messageJitterMilliseconds, 0)
        rate = shaping.downBytesPerSecond.map { max($0, 1) }
        pieceBytes = rate.map { max($0 / 10, 1) } ?? Int.max
        self.resetAt = resetAt
    }

    var isEmpty: Bool { waiting.isEmpty }

    /// When the last frame waiting is due; nil when none waits.
    var lastWaitingDue: Int64? { waiting.last?.due }

    /// Whether the reset's bytes have all been handed on.
    var reachedReset: Bool { resetAt.map { sent >= $0 } ?? false }

    /// Queues a frame at `now`: due after a latency drawn for it, and not before the one ahead.
    func add(_ frame: [UInt8], now: Int64) {
        guard !reachedReset else { return }
        var delay = latency.map { $0.milliseconds(random) } ?? 0
        if jitterMilliseconds > 0 { delay += random.int(in: 0...jitterMilliseconds) }
        let due = max(now + Int64(delay), lastDue)
        lastDue = due
        waiting.append((due, frame))
        waitingBytes += frame.count
    }

    /// The bytes that may go at `now` (empty: none yet).
    func release(now: Int64) -> [UInt8] {
        var out: [UInt8] = []
        while let first = waiting.first, first.due <= now, !reachedReset {
            let microseconds = now * 1_000
            if rate != nil, microseconds < nextPieceMicroseconds { break }
            var count = min(first.bytes.count - firstSent, pieceBytes)
            if let resetAt { count = min(count, resetAt - sent) }
            out += first.bytes[firstSent..<(firstSent + count)]
            firstSent += count
            sent += count
            waitingBytes -= count
            if let rate {
                // The schedule is kept, unless the socket fell far behind: then from now.
                let from = microseconds > nextPieceMicroseconds + 200_000 ? microseconds : nextPieceMicroseconds
                nextPieceMicroseconds = from + Int64(count) * 1_000_000 / Int64(rate)
            }
            if firstSent == first.bytes.count {
                waiting.removeFirst()
                firstSent = 0
            }
        }
        if reachedReset {
            waiting.removeAll()
            waitingBytes = 0
        }
        return out
    }

    /// When something may go next; nil when nothing waits.
    var nextDeadline: Int64? {
        guard let first = waiting.first else { return nil }
        guard rate != nil else { return first.due }
        return max(first.due, (nextPieceMicroseconds + 999) / 1_000)
    }

    /// Drops what waits (the client left, or the server is stopping).
    func clear() {
        waiting.removeAll()
        waitingBytes = 0
        firstSent = 0
    }
}
