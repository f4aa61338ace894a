import CMicroHTTPD
import CMicroHTTPDShim
import MishapSupport

#if canImport(Glibc)
import Glibc
#endif

/// A body cut after N bytes (`ranges: { resetAfterBytes: N }` or `closeAfterBytes`): the bytes,
/// then a reset (RST) or a close (FIN), so that the client has exactly N bytes of it. Before the
/// break it waits (`SocketDrain`, no thread held) until the client has taken the
/// bytes. Under a network profile that shapes delivery the cut is `ShapedBody`'s instead, paced
/// by the profile's bandwidth.
final class RangeCutBody {
    let bytes: [UInt8]
    let cut: Int
    let closes: Bool
    let connection: OpaquePointer
    let socket: Int32
    let suspensions: Suspensions
    private let drain: SocketDrain

    init(bytes: [UInt8], cut: Int, closes: Bool, connection: OpaquePointer, suspensions: Suspensions) {
        self.bytes = bytes
        self.cut = min(max(cut, 0), bytes.count)
        self.closes = closes
        self.connection = connection
        socket = mishap_connection_fd(connection)
        self.suspensions = suspensions
        drain = SocketDrain(socket: socket)
    }

    /// Fills `buffer` from `position`; returns the byte count, 0 to wait, or an end marker.
    func read(at position: Int, into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        drain.start()
        if position < cut {
            let count = min(cut - position, capacity)
            bytes.withUnsafeBufferPointer { source in
                UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + position, byteCount: count)
            }
            return count
        }
        if drain.shouldWait(for: cut), suspensions.hold(connection, milliseconds: SocketDrain.stepMilliseconds) { return 0 }
        return SocketDrain.breakConnection(socket, closes: closes)
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
