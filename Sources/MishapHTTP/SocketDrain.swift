import MishapSupport

#if canImport(Glibc)
import Glibc
#endif

/// Waits, before a connection is broken after N bytes, until the client has those bytes: a
/// reset (RST) throws away what the server's socket still holds, so a break at once left slow
/// readers fewer than N (a Python client that waited 0.5 s before reading a 3 MB body reset
/// after 2,500,000 bytes got 114,688 of them).
///
/// Its owner asks `shouldWait(for:)` at the break, and while it says yes, holds the connection
/// `stepMilliseconds` (suspended, or on the WebSocket loop's timer: no thread waits) and asks
/// again. It says yes until the socket is empty (nothing unsent, nothing unacknowledged:
/// `TCP_INFO`), no byte more was acknowledged since the last look, and the peer has
/// acknowledged at least N bytes since `start()`. A client that takes nothing for
/// `limitMilliseconds` gets the break anyway; one that keeps taking bytes, however slowly, is
/// waited for (its connection suspended, which costs no thread), since the bytes it has not
/// yet read are bytes it was promised. Used by every body that breaks after
/// N bytes (`RangeCutBody`, `ShapedBody`, `EventStreamBody`) and by a WebSocket's network
/// reset. Touched by one thread at a time.
final class SocketDrain {
    let socket: Int32
    /// How long the break has waited since the peer last acknowledged a byte.
    private var heldMilliseconds = 0
    /// Whether the socket was looked at since the break, and how many bytes the peer had
    /// acknowledged then.
    private var looked = false
    private var acknowledged: UInt64 = 0
    /// The bytes the peer had acknowledged when the counted bytes began (those of earlier
    /// answers on the connection); nil until `start()`.
    private var acknowledgedBefore: UInt64?

    /// The longest wait for the client to take the bytes before the break, and each step of it.
    static let limitMilliseconds = 2_000
    static let stepMilliseconds = 5

    init(socket: Int32) {
        self.socket = socket
    }

    /// Notes where the counted bytes begin: called before the first of them is written (the
    /// first read of a body; the adoption of a WebSocket). Later calls change nothing.
    func start() {
        if acknowledgedBefore == nil { acknowledgedBefore = Self.socketState(socket).acknowledged }
    }

    /// Whether the break should wait one step more for the client to take `bytes` bytes (and
    /// what the socket still holds). Counts the step as waited when it says yes.
    func shouldWait(for bytes: Int) -> Bool {
        guard heldMilliseconds < Self.limitMilliseconds else { return false }
        // Held at least once, and again until the socket is empty and no byte more was
        // acknowledged since the last look. And until the peer has acknowledged at least
        // `bytes` bytes: a check that costs one comparison, and holds should a block not yet be
        // written at the break (libmicrohttpd 0.9.75 was seen to write each block before it
        // asks for the next: the peer had acknowledged every byte before each read).
        let state = Self.socketState(socket)
        let taken = state.known ? state.acknowledged &- (acknowledgedBefore ?? 0) : UInt64.max
        guard state.pending || !looked || state.acknowledged != acknowledged || taken < UInt64(max(bytes, 0)) else { return false }
        if looked, state.acknowledged != acknowledged { heldMilliseconds = 0 }
        looked = true
        acknowledged = state.acknowledged
        heldMilliseconds += Self.stepMilliseconds
        return true
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

    /// Breaks the connection after the bytes, and returns the error end for libmicrohttpd: a
    /// FIN (`closes`: `shutdown(SHUT_RDWR)`, which also wakes libmicrohttpd to close), or a RST.
    /// The RST is linger 0, and on Linux the socket is also disconnected (`connect` to
    /// `AF_UNSPEC`, `tcp_disconnect`), which sends it at once: left to libmicrohttpd's close
    /// after an error end in a resumed connection's read, it waited for another event on the
    /// connection (a download reset after 40 % was held open until the client gave up, 3 runs
    /// of 3), as an event stream's reset did (docs/streams.md). The descriptor stays
    /// libmicrohttpd's, closed.
    static func breakConnection(_ socket: Int32, closes: Bool) -> Int {
        if closes {
            Socket.shutDown(socket)
            return StreamedBody.endWithError
        }
        Socket.resetOnClose(socket)
        Socket.disconnect(socket)
        Socket.shutDownReading(socket)
        return StreamedBody.endWithError
    }
}
