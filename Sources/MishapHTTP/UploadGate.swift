import CMicroHTTPD
import CMicroHTTPDShim
import Dispatch
import MishapEngine
import MishapSupport

/// What a network profile does to a request body on its way in (`UploadShaping`), carried out
/// as the pieces arrive: read at a rate, stop reading after some bytes (the upload stalls), or
/// reset after them. Kept in the request's state (`RequestState.upload`), asked about each
/// piece of body by the access handler.
///
/// What is not consumed stays in libmicrohttpd's read buffer, and once that is full it reads no
/// more from the socket, so the client's sending slows down or stops. A piece left partly
/// unread is offered again only once more bytes arrive, or after a resume: the connection is
/// always suspended while bytes wait (docs/libmicrohttpd.md, "A body read at a rate").
final class UploadGate {
    /// Bytes per second; nil: as fast as they come.
    private let rate: Int?
    /// The most bytes one piece read at `rate` holds (about a tenth of a second's worth).
    private let pieceBytes: Int
    /// Stall or reset once this many bytes are read; nil: neither.
    private let limit: Int?
    private let resets: Bool
    /// Body bytes read so far.
    private(set) var received = 0
    /// When the next piece may be read (uptime nanoseconds); 0 before the first.
    private var nextDue: UInt64 = 0
    /// Set once the upload stalled: every later call closes the connection.
    private(set) var stalled = false

    /// A gate for `shaping`, or nil when it changes nothing about reading (`answerEarly` is
    /// carried out on the first call instead).
    init?(_ shaping: UploadShaping) {
        rate = shaping.upBytesPerSecond.map { max($0, 1) }
        pieceBytes = rate.map { min(max($0 / 10, 1), 16 * 1024) } ?? Int.max
        switch shaping.fault {
        case .stallAfterBytes(let bytes)?:
            limit = max(bytes, 0)
            resets = false
        case .resetAfterBytes(let bytes)?:
            limit = max(bytes, 0)
            resets = true
        case .answerEarly?, nil:
            limit = nil
            resets = false
        }
        if rate == nil && limit == nil { return nil }
    }

    /// What follows the bytes consumed of a piece.
    enum After: Equatable {
        /// Nothing: go on reading as bytes come.
        case next
        /// Hold the connection this many milliseconds, then read on.
        case wait(Int)
        /// Stop reading: hold the connection until the client leaves.
        case stall
        /// Reset the connection.
        case reset
    }

    /// How many of the `size` bytes offered to consume, and what then.
    func step(offered size: Int) -> (count: Int, then: After) {
        if stalled { return (0, .reset) }
        if let limit, received >= limit {
            // More is coming past the mark (a body of exactly `limit` bytes ends normally).
            if resets { return (0, .reset) }
            stalled = true
            return (0, .stall)
        }
        let room = limit.map { $0 - received } ?? Int.max
        guard let rate else { return consume(min(size, room), of: size, wait: 0) }
        let now = DispatchTime.now().uptimeNanoseconds
        if nextDue == 0 { nextDue = now }
        if now < nextDue { return (0, .wait(Self.milliseconds(nextDue - now))) }
        let count = min(size, pieceBytes, room)
        // The schedule is kept unless the client fell far behind (then counted from now).
        let base = now > nextDue + 200_000_000 ? now : nextDue
        nextDue = base + UInt64(count) * 1_000_000_000 / UInt64(rate)
        return consume(count, of: size, wait: nextDue > now ? Self.milliseconds(nextDue - now) : 0)
    }

    private func consume(_ count: Int, of size: Int, wait: Int) -> (count: Int, then: After) {
        received += count
        if let limit, received >= limit {
            if resets { return (count, .reset) }
            if count < size {
                stalled = true
                return (count, .stall)
            }
        }
        // Bytes left unread are offered again only after a resume: hold whenever some are left.
        return (count, count < size ? .wait(max(wait, 1)) : .next)
    }

    private static func milliseconds(_ nanoseconds: UInt64) -> Int {
        Int((nanoseconds + 999_999) / 1_000_000)
    }
}
