import CMicroHTTPD
import CMicroHTTPDShim
import MishapSupport

#if canImport(Glibc)
import Glibc
#endif

/// A body cut after N bytes (`ranges: { resetAfterBytes: N }` or `closeAfterBytes`): the bytes,
/// then a reset (RST) or a close (FIN), so that the client has exactly N bytes of it.
///
/// When libmicrohttpd asks for the bytes after the cut, those before it may not have reached
/// the client: libmicrohttpd asks for the next block before it has written the last one (a
/// close there left a client 16,384 of 30,000 bytes), and a reset throws away what the socket
/// still holds (a Python client that waited 0.5 s before reading a 3 MB body reset after
/// 2,500,000 bytes got 114,688 of them). So at the cut the connection is held 5 ms at a time
/// (suspended: no thread waits; on resuming, libmicrohttpd writes what it holds), until the
/// socket is empty (nothing unsent, nothing unacknowledged: `TCP_INFO`) and no byte more was
/// acknowledged since the last look, for at most 2 s: a client that reads nothing for that
/// long gets the break anyway.
final class RangeCutBody {
    let bytes: [UInt8]
    let cut: Int
    let closes: Bool
    let connection: OpaquePointer
    let socket: Int32
    let suspensions: Suspensions
    private var heldMilliseconds = 0
    /// Whether the socket was looked at after the cut, and how many bytes the peer had
    /// acknowledged then.
    private var looked = false
    private var acknowledged: UInt64 = 0
    /// The bytes the peer had acknowledged when the body was first asked for (those of earlier
    /// answers on the connection); nil until then.
    private var acknowledgedBefore: UInt64?

    init(bytes: [UInt8], cut: Int, closes: Bool, connection: OpaquePointer, suspensions: Suspensions) {
        self.bytes = bytes
        self.cut = min(max(cut, 0), bytes.count)
        self.closes = closes
        self.connection = connection
        socket = mishap_connection_fd(connection)
        self.suspensions = suspensions
    }

    /// The longest wait for the client to take the bytes before the break, and each step of it.
    static let drainLimitMilliseconds = 2_000
    static let drainStepMilliseconds = 5

    /// Fills `buffer` from `position`; returns the byte count, 0 to wait, or an end marker.
    func read(at position: Int, into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        if acknowledgedBefore == nil { acknowledgedBefore = Self.socketState(socket).acknowledged }
        if position < cut {
            let count = min(cut - position, capacity)
            bytes.withUnsafeBufferPointer { source in
                UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + position, byteCount: count)
            }
            return count
        }
        if heldMilliseconds < Self.drainLimitMilliseconds {
            // Held at least once, and again until the socket is empty and no byte more was
            // acknowledged since the last look: the bytes libmicrohttpd held have gone too.
            // And until the peer has acknowledged at least `cut` bytes of this answer: an empty
            // socket says nothing of a block libmicrohttpd still holds (seen under the thread
            // sanitizer: the break came after 16,384 bytes of 40,000, the rest still in its
            // buffer, when it asked again before writing).
            let state = Self.socketState(socket)
            let taken = state.known ? state.acknowledged &- (acknowledgedBefore ?? 0) : UInt64.max
            if state.pending || !looked || state.acknowledged != acknowledged || taken < UInt64(cut) {
                looked = true
                acknowledged = state.acknowledged
                heldMilliseconds += Self.drainStepMilliseconds
                if suspensions.hold(connection, milliseconds: Self.drainStepMilliseconds) { return 0 }
            }
        }
        if closes {
            // The truncate fault's end: a FIN after the bytes, and libmicrohttpd woken to close.
            shutdown(socket, Int32(SHUT_RDWR))
            return StreamedBody.endWithError
        }
        // A RST, not a FIN, as `ShapedBody` sends it: linger 0, and only the reading side shut.
        Socket.resetOnClose(socket)
        shutdown(socket, Int32(SHUT_RD))
        return StreamedBody.endWithError
    }

    /// Whether `socket` holds bytes not yet sent, or sent and not yet acknowledged, and how
    /// many the peer has acknowledged: Linux's `struct tcp_info`, read raw, since Glibc's
    /// declaration of it stops before `tcpi_notsent_bytes`. Offsets from linux/tcp.h:
    /// `tcpi_unacked` (segments in flight) at 24, `tcpi_bytes_acked` at 120,
    /// `tcpi_notsent_bytes` at 144. A kernel that fills in less says nothing is pending.
    static func socketState(_ socket: Int32) -> (pending: Bool, acknowledged: UInt64, known: Bool) {
        var info = [UInt8](repeating: 0, count: 232)
        var length = socklen_t(info.count)
        let result = info.withUnsafeMutableBytes { getsockopt(socket, Int32(IPPROTO_TCP), TCP_INFO, $0.baseAddress, &length) }
        guard result == 0, length >= 148 else { return (false, 0, false) }
        return info.withUnsafeBytes { raw in
            let unacknowledged = raw.loadUnaligned(fromByteOffset: 24, as: UInt32.self)
            let notSent = raw.loadUnaligned(fromByteOffset: 144, as: UInt32.self)
            return (unacknowledged > 0 || notSent > 0, raw.loadUnaligned(fromByteOffset: 120, as: UInt64.self), true)
        }
    }
}

func readRangeCutBody(_ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int {
    guard let cls, let buffer else { return StreamedBody.endWithError }
    let body = Unmanaged<RangeCutBody>.fromOpaque(cls).takeUnretainedValue()
    return body.read(at: Int(position), into: buffer, capacity: capacity)
}

func releaseRangeCutBody(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<RangeCutBody>.fromOpaque(cls).release()
}
