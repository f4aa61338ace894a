import CMicroHTTPD
import CMicroHTTPDShim
import MishapSupport

#if canImport(Glibc)
import Glibc
#endif

/// A body cut after N bytes (`ranges: { resetAfterBytes: N }` or `closeAfterBytes`): the bytes,
/// then a reset (RST) or a close (FIN), so that the client has exactly N bytes of it.
///
/// A reset throws away what the server's socket still holds: bytes handed to it but not yet
/// taken by the client (a slow reader's window is full) never arrive. Measured: a Python client
/// that waited 0.5 s before reading a 3 MB body reset after 2,500,000 bytes got 114,688 of them.
/// So before a reset the connection is held, 5 ms at a time (suspended: no thread waits), until
/// the kernel says every byte sent is acknowledged (`TCP_INFO`), for at most 2 s; then the same
/// client got all 2,500,000 (a client that reads nothing for 2 s gets the reset anyway). A close
/// needs no wait: its FIN follows the bytes.
final class RangeCutBody {
    let bytes: [UInt8]
    let cut: Int
    let closes: Bool
    let connection: OpaquePointer
    let socket: Int32
    let suspensions: Suspensions
    private var heldMilliseconds = 0
    private var headFlushed = false

    init(bytes: [UInt8], cut: Int, closes: Bool, connection: OpaquePointer, suspensions: Suspensions) {
        self.bytes = bytes
        self.cut = min(max(cut, 0), bytes.count)
        self.closes = closes
        self.connection = connection
        socket = mishap_connection_fd(connection)
        self.suspensions = suspensions
    }

    /// The longest wait for the client to take the bytes before a reset, and each step of it.
    static let drainLimitMilliseconds = 2_000
    static let drainStepMilliseconds = 5

    /// Fills `buffer` from `position`; returns the byte count, 0 to wait, or an end marker.
    func read(at position: Int, into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        if position < cut {
            let count = min(cut - position, capacity)
            bytes.withUnsafeBufferPointer { source in
                UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + position, byteCount: count)
            }
            return count
        }
        if position == 0, !headFlushed {
            // The first read comes just after the head was handed to the socket; an error end
            // there can leave the head unsent (docs/libmicrohttpd.md, "A reset after some bytes
            // of the body"): a moment's wait first, as `ShapedBody` does.
            headFlushed = true
            if suspensions.hold(connection, milliseconds: Self.drainStepMilliseconds) { return 0 }
        }
        if closes {
            // The truncate fault's end: a FIN after the bytes, and libmicrohttpd woken to close.
            shutdown(socket, Int32(SHUT_RDWR))
            return StreamedBody.endWithError
        }
        if heldMilliseconds < Self.drainLimitMilliseconds, Self.hasUnacknowledgedBytes(socket) {
            heldMilliseconds += Self.drainStepMilliseconds
            if suspensions.hold(connection, milliseconds: Self.drainStepMilliseconds) { return 0 }
        }
        // A RST, not a FIN, as `ShapedBody` sends it: linger 0, and only the reading side shut.
        Socket.resetOnClose(socket)
        shutdown(socket, Int32(SHUT_RD))
        return StreamedBody.endWithError
    }

    /// Whether `socket` holds bytes not yet sent, or sent and not yet acknowledged: Linux's
    /// `struct tcp_info`, read raw, since Glibc's declaration of it stops before
    /// `tcpi_notsent_bytes`. Offsets from linux/tcp.h: `tcpi_unacked` (segments in flight) at
    /// 24, `tcpi_notsent_bytes` at 144. A kernel that fills in less says nothing: no wait.
    static func hasUnacknowledgedBytes(_ socket: Int32) -> Bool {
        var info = [UInt8](repeating: 0, count: 232)
        var length = socklen_t(info.count)
        let result = info.withUnsafeMutableBytes { getsockopt(socket, Int32(IPPROTO_TCP), TCP_INFO, $0.baseAddress, &length) }
        guard result == 0, length >= 148 else { return false }
        func word(_ offset: Int) -> UInt32 {
            info.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
        }
        return word(24) > 0 || word(144) > 0
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
