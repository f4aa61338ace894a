import MishapTesting
import MishapTestSupport

/// A WebSocket client over a raw socket, for the tests of MishapTesting: the upgrade, masked
/// frames out, whole frames in. URLSessionWebSocketTask does not work with FoundationNetworking
/// on Linux, so this is what a test on Linux has.
final class WebSocketTestClient {
    /// One frame as the server sent it.
    struct Frame: Equatable {
        var opcode: UInt8
        var payload: [UInt8]
    }

    /// The server closed the connection (or reset it) before a whole frame came.
    struct Ended: Error {}

    /// The upgrade was answered with another status than 101.
    struct Refused: Error {
        let status: Int
    }

    private let connection: RawHTTPConnection
    private var buffer: [UInt8] = []

    /// Connects and upgrades `path`, in `session`; throws unless the answer is 101.
    init(port: UInt16, path: String, session: MishapSession) throws {
        connection = try RawHTTPConnection(port: port)
        try connection.send(RawHTTPConnection.request("GET", path, headers: [
            ("Host", "127.0.0.1"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
            (session.headerName, session.id),
        ]))
        let status = try connection.readResponse(toHead: true).status
        guard status == 101 else { throw Refused(status: status) }
    }

    /// Sends one masked frame, as a client must.
    func send(opcode: UInt8, _ payload: [UInt8]) throws {
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        var frame: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        try connection.send(frame + mask + payload.enumerated().map { $0.element ^ mask[$0.offset & 3] })
    }

    /// The next whole frame from the server (which does not mask); `Ended` when the connection
    /// ends first.
    func readMessage() throws -> Frame {
        while true {
            if let frame = takeFrame() { return frame }
            guard case .bytes(let bytes) = try connection.receivePiece() else { throw Ended() }
            buffer += bytes
        }
    }

    /// Takes a whole frame off the front of `buffer`, if one is there.
    private func takeFrame() -> Frame? {
        guard buffer.count >= 2 else { return nil }
        var length = Int(buffer[1] & 0x7F)
        var start = 2
        if length == 126 {
            guard buffer.count >= 4 else { return nil }
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            start = 4
        } else if length == 127 {
            guard buffer.count >= 10 else { return nil }
            length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
            start = 10
        }
        guard buffer.count >= start + length else { return nil }
        let frame = Frame(opcode: buffer[0] & 0x0F, payload: Array(buffer[start..<(start + length)]))
        buffer.removeFirst(start + length)
        return frame
    }

    func close() { connection.close() }
}
