import CMicroHTTPD
import CMicroHTTPDShim
import Dispatch
import MishapEngine
import MishapSupport

/// A body libmicrohttpd pulls piece by piece: dribbled over time, cut short, or sent past a
/// `Content-Length` that lies.
final class StreamedBody {
    enum Mode {
        /// Pieces due at set offsets from the first read.
        case dribble(Dribble)
        /// Send this many bytes, then fail the response.
        case truncate(Int)
        /// Send everything, then end the stream.
        case whole
    }

    let bytes: [UInt8]
    let mode: Mode
    let connection: OpaquePointer
    let socket: Int32
    let suspensions: Suspensions
    /// The memory budget's share `bytes` hold (an upstream's answer): given back when
    /// libmicrohttpd lets go of the response, after its last byte.
    let heldMemory: MemoryLease?
    /// Piece boundaries and due times (nanoseconds after the first read) for `dribble`.
    private var pieceEnds: [Int] = []
    private var pieceDue: [UInt64] = []
    private var start: UInt64?

    init(bytes: [UInt8], mode: Mode, connection: OpaquePointer, socket: Int32, suspensions: Suspensions,
         heldMemory: MemoryLease? = nil) {
        self.bytes = bytes
        self.heldMemory = heldMemory
        self.mode = mode
        self.connection = connection
        self.socket = socket
        self.suspensions = suspensions
        if case .dribble(let dribble) = mode {
            let count = dribble.chunks
            let span = UInt64(dribble.milliseconds) * 1_000_000
            for piece in 0..<count {
                pieceEnds.append(bytes.count * (piece + 1) / count)
                // The first piece goes at once and the last when the duration is over.
                pieceDue.append(count == 1 ? span : span * UInt64(piece) / UInt64(count - 1))
            }
        }
    }

    /// Fills `buffer` from `position`; returns the byte count, 0 to wait, or an end marker.
    func read(at position: Int, into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        switch mode {
        case .whole:
            guard position < bytes.count else { return Self.endOfStream }
            return copy(from: position, upTo: bytes.count, into: buffer, capacity: capacity)
        case .truncate(let sent):
            guard position < sent else {
                // Under MHD_USE_TURBO an error end leaves the socket open until timeout
                // (docs/libmicrohttpd.md, "An error end under TURBO leaves the socket open").
                Socket.shutDown(socket)
                return Self.endWithError
            }
            return copy(from: position, upTo: sent, into: buffer, capacity: capacity)
        case .dribble:
            let now = DispatchTime.now().uptimeNanoseconds
            let started = start ?? now
            start = started
            guard let piece = pieceEnds.firstIndex(where: { $0 > position }) else { return Self.endOfStream }
            let due = started + pieceDue[piece]
            if now < due {
                let wait = Int((due - now + 999_999) / 1_000_000)
                // Returning 0 without suspending would spin; a stopping server sends the rest at once.
                if suspensions.hold(connection, milliseconds: wait) { return 0 }
            }
            return copy(from: position, upTo: pieceEnds[piece], into: buffer, capacity: capacity)
        }
    }

    private func copy(from position: Int, upTo end: Int, into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let count = min(end - position, capacity)
        bytes.withUnsafeBufferPointer { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + position, byteCount: count)
        }
        return count
    }

    static let endOfStream = -1
    static let endWithError = -2
}

func readStreamedBody(_ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int {
    guard let cls, let buffer else { return StreamedBody.endWithError }
    let body = Unmanaged<StreamedBody>.fromOpaque(cls).takeUnretainedValue()
    return body.read(at: Int(position), into: buffer, capacity: capacity)
}

func releaseStreamedBody(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<StreamedBody>.fromOpaque(cls).release()
}
