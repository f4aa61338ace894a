import CMicroHTTPD
import CMicroHTTPDShim
import Dispatch
import MishapEngine
import MishapSupport

#if canImport(Glibc)
import Glibc
#endif

/// A body sent through a network profile (`ResponsePlan.network`): at a rate, in pieces with a
/// latency and jitter between them, cut by a reset after some bytes, or followed by a slow
/// close. libmicrohttpd pulls it piece by piece; between pieces the connection is suspended
/// with a timer (`Suspensions.hold`), so no worker thread waits. A rule's own cut (a range
/// answer's `resetAfterBytes` or `closeAfterBytes`) is carried out here too when a profile
/// shapes the answer: the earlier of the two cuts wins, the rule's on a tie. Before a reset or a
/// cut's close it waits (`SocketDrain`) until the client has the bytes before it.
final class ShapedBody {
    let bytes: [UInt8]
    let connection: OpaquePointer
    let socket: Int32
    let suspensions: Suspensions
    /// Bytes per second; nil: as fast as the socket takes them (or as the dribble says).
    private let rate: Int?
    /// The most bytes one piece sent at `rate` holds (about a tenth of a second's worth).
    private let pieceBytes: Int
    private let chunkLatencyNanoseconds: UInt64
    private let chunkJitterMilliseconds: Int
    /// The body bytes sent before the connection is reset (or closed: `cutCloses`); nil: no reset.
    let resetAt: Int?
    /// Whether the break at `resetAt` is a close (FIN: a rule's `closeAfterBytes`), not a reset.
    let cutCloses: Bool
    private let drain: SocketDrain
    /// After the last byte, hold the connection this long, then end the stream (closed).
    let slowCloseMilliseconds: Int
    /// A dribble's piece boundaries and due times (nanoseconds after the first read).
    private var dribbleEnds: [Int] = []
    private var dribbleDue: [UInt64] = []
    private var start: UInt64?
    /// When the next piece may go (uptime nanoseconds).
    private var nextDue: UInt64 = 0
    private var closeWaited = false

    /// `cut`: a rule's own break after some bytes, beside the profile's.
    init(bytes: [UInt8], shaping: NetworkShaping, dribble: Dribble?, cut: (bytes: Int, closes: Bool)? = nil,
         connection: OpaquePointer, suspensions: Suspensions) {
        self.bytes = bytes
        self.connection = connection
        socket = mishap_connection_fd(connection)
        self.suspensions = suspensions
        rate = shaping.downBytesPerSecond.map { max($0, 1) }
        pieceBytes = rate.map { min(max($0 / 10, 1), Self.blockBytes) } ?? Self.blockBytes
        chunkLatencyNanoseconds = UInt64(max(shaping.chunkLatencyMilliseconds, 0)) * 1_000_000
        chunkJitterMilliseconds = max(shaping.chunkJitterMilliseconds, 0)
        let profileReset = shaping.resetAfter.map { min(max($0.bytes(of: bytes.count), 0), bytes.count) }
        let ruleCut = cut.map { (bytes: min(max($0.bytes, 0), bytes.count), closes: $0.closes) }
        if let ruleCut, ruleCut.bytes <= (profileReset ?? Int.max) {
            resetAt = ruleCut.bytes
            cutCloses = ruleCut.closes
        } else {
            resetAt = profileReset
            cutCloses = false
        }
        drain = SocketDrain(socket: socket)
        slowCloseMilliseconds = resetAt == nil ? shaping.slowCloseMilliseconds : 0
        if let dribble {
            let count = max(dribble.chunks, 1)
            let span = UInt64(max(dribble.milliseconds, 0)) * 1_000_000
            for piece in 0..<count {
                dribbleEnds.append(bytes.count * (piece + 1) / count)
                dribbleDue.append(count == 1 ? span : span * UInt64(piece) / UInt64(count - 1))
            }
        }
    }

    /// libmicrohttpd's block for a callback response: the most one read can fill.
    static let blockBytes = 16 * 1024

    /// Whether the response's size is left unknown (and its `Content-Length` written by hand),
    /// so that ending the stream closes the connection: a slow close.
    var closesByEndingTheStream: Bool { slowCloseMilliseconds > 0 }

    /// Fills `buffer` from `position`; returns the byte count, 0 to wait, or an end marker.
    func read(at position: Int, into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        drain.start()
        let end = resetAt ?? bytes.count
        guard position < end else { return finish(at: position) }
        let now = DispatchTime.now().uptimeNanoseconds
        let started = start ?? now
        if start == nil {
            start = now
            nextDue = now
        }
        var due = nextDue
        var pieceEnd = end
        if let piece = dribbleEnds.firstIndex(where: { $0 > position }) {
            due = max(due, started + dribbleDue[piece])
            pieceEnd = min(pieceEnd, dribbleEnds[piece])
        }
        if now < due {
            // Returning 0 without suspending would spin; a stopping server sends the rest at once.
            if suspensions.hold(connection, milliseconds: Int((due - now + 999_999) / 1_000_000)) { return 0 }
        }
        let paced = rate != nil || !dribbleEnds.isEmpty
        if rate != nil { pieceEnd = min(pieceEnd, position + pieceBytes) }
        let count = min(pieceEnd - position, capacity)
        bytes.withUnsafeBufferPointer { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + position, byteCount: count)
        }
        if paced {
            // The schedule is kept (a late piece does not delay the ones after it), unless the
            // client fell far behind: then the rate counts from now, without a burst.
            var next = now > due + 200_000_000 ? now : due
            if let rate { next += UInt64(count) * 1_000_000_000 / UInt64(rate) }
            next += chunkLatencyNanoseconds
            if chunkJitterMilliseconds > 0 { next += UInt64(Int.random(in: 0...chunkJitterMilliseconds)) * 1_000_000 }
            nextDue = next
        }
        return count
    }

    /// The body (or its part before the reset) is sent: reset, close slowly, or end.
    private func finish(at position: Int) -> Int {
        if let resetAt {
            // Held (suspended, 5 ms at a time) until the client has taken the bytes
            // before the break: a reset throws away what the socket still holds, so a slow
            // reader got fewer than N. With no byte of the body to send, the wait also lets the
            // head reach the client: measured, an error end on this first read left the
            // connection open, the head not at the client, in 3 runs of 5 (docs/libmicrohttpd.md,
            // "A reset after some bytes of the body").
            if drain.shouldWait(for: resetAt), suspensions.hold(connection, milliseconds: SocketDrain.stepMilliseconds) { return 0 }
            return SocketDrain.breakConnection(socket, closes: cutCloses)
        }
        if slowCloseMilliseconds > 0, !closeWaited {
            closeWaited = true
            if suspensions.hold(connection, milliseconds: slowCloseMilliseconds) { return 0 }
        }
        return StreamedBody.endOfStream
    }
}

func readShapedBody(_ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int {
    guard let cls, let buffer else { return StreamedBody.endWithError }
    let body = Unmanaged<ShapedBody>.fromOpaque(cls).takeUnretainedValue()
    return body.read(at: Int(position), into: buffer, capacity: capacity)
}

func releaseShapedBody(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<ShapedBody>.fromOpaque(cls).release()
}

extension HTTPServer {
    /// Sends a plan through its network shaping (`NetworkShaping.shapesDelivery`): its body at
    /// the profile's rate (a dribble capped by it), cut by a reset, or closed slowly.
    @inline(never)
    /// `cut`: a range answer's own break (`carryOutCut`), the earlier of it and the profile's wins.
    func carryOutShaped(_ plan: ResponsePlan, _ shaping: NetworkShaping, cut: (bytes: Int, closes: Bool)? = nil,
                        on connection: OpaquePointer) -> MHD_Result {
        let body = ShapedBody(bytes: plan.body, shaping: shaping, dribble: plan.dribble, cut: cut, connection: connection,
                              suspensions: suspensions)
        var plan = plan
        var size = UInt64(plan.body.count)
        if plan.body.isEmpty, let length = plan.declaredLength {
            // An upstream's answer to HEAD: no body to shape.
            plan.headers.removeAll { $0.name.equalsIgnoringASCIICase("content-length") }
            size = length
        } else if body.closesByEndingTheStream {
            // Unknown size without chunking: the stream's end closes the connection, and the
            // client still knows where the body ends from the Content-Length written here.
            plan.headers.removeAll { $0.name.equalsIgnoringASCIICase("content-length") }
            plan.headers.append(Field("Content-Length", String(plan.body.count)))
            size = UInt64.max
        }
        let context = Unmanaged.passRetained(body).toOpaque()
        guard let response = MHD_create_response_from_callback(size, ShapedBody.blockBytes, readShapedBody, context,
                                                               releaseShapedBody) else {
            Unmanaged<ShapedBody>.fromOpaque(context).release()
            return .NO
        }
        if size == UInt64.max {
            _ = mishap_response_set_flags(response, [.RF_HTTP_1_0_COMPATIBLE_STRICT, .RF_INSANITY_HEADER_CONTENT_LENGTH])
        }
        addHeaders(plan, to: response)
        return queueOnce(response, status: plan.status, on: connection)
    }
}
