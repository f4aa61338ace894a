import CGnuTLS
import MishapSupport

/// RFC 6455 framing: the frames the server writes (never masked) and the client's frames it
/// reads (always masked).
enum WebSocketFrames {
    static let continuation: UInt8 = 0x0
    static let text: UInt8 = 0x1
    static let binary: UInt8 = 0x2
    static let close: UInt8 = 0x8
    static let ping: UInt8 = 0x9
    static let pong: UInt8 = 0xA

    /// The GUID RFC 6455 appends to the client's key before hashing it.
    static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key`: base64 of the SHA-1 of the key
    /// and the GUID (GnuTLS's SHA-1, which libmicrohttpd links anyway).
    static func accept(key: String) -> String? {
        let input = Array((key + acceptGUID).utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        let status = input.withUnsafeBytes { bytes in
            gnutls_hash_fast(GNUTLS_DIG_SHA1, bytes.baseAddress, bytes.count, &digest)
        }
        return status == 0 ? Base64.encode(digest) : nil
    }

    /// One whole frame from the server: FIN set, unmasked.
    static func frame(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var out = header(opcode: opcode, length: UInt64(payload.count))
        out.append(contentsOf: payload)
        return out
    }

    /// The header of a final, unmasked frame announcing `length` bytes.
    static func header(opcode: UInt8, length: UInt64, firstByte: UInt8? = nil) -> [UInt8] {
        var out: [UInt8] = [firstByte ?? (0x80 | opcode)]
        if length < 126 {
            out.append(UInt8(length))
        } else if length <= 0xFFFF {
            out.append(126)
            out.append(UInt8(length >> 8))
            out.append(UInt8(length & 0xFF))
        } else {
            out.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((length >> UInt64(shift)) & 0xFF)) }
        }
        return out
    }

    /// A close frame: the code (two bytes, network order) and the reason.
    static func closeFrame(code: Int, reason: String) -> [UInt8] {
        frame(opcode: close, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
    }

    /// A frame read from the client.
    struct Frame {
        var fin: Bool
        var opcode: UInt8
        var payload: [UInt8]
    }

    /// What reading the start of `input` gave.
    enum Read {
        /// Not a whole frame yet.
        case needMore
        /// A frame, and how many bytes of input it took.
        case frame(Frame, consumed: Int)
        /// The client broke the protocol: close with this code (1002 protocol error, 1009 too
        /// big) and reason.
        case failure(code: Int, reason: String)
    }

    /// Reads one client frame from the start of `input`, refusing frames larger than `limit`.
    static func read(_ input: ArraySlice<UInt8>, limit: Int) -> Read {
        guard input.count >= 2 else { return .needMore }
        let start = input.startIndex
        let first = input[start], second = input[start + 1]
        let fin = first & 0x80 != 0
        let opcode = first & 0x0F
        guard first & 0x70 == 0 else { return .failure(code: 1002, reason: "reserved bits set without an extension") }
        guard [continuation, text, binary, close, ping, pong].contains(opcode) else {
            return .failure(code: 1002, reason: "unknown opcode \(opcode)")
        }
        guard second & 0x80 != 0 else { return .failure(code: 1002, reason: "a client's frames must be masked") }
        var length = UInt64(second & 0x7F)
        var offset = 2
        if length == 126 {
            guard input.count >= 4 else { return .needMore }
            length = UInt64(input[start + 2]) << 8 | UInt64(input[start + 3])
            offset = 4
        } else if length == 127 {
            guard input.count >= 10 else { return .needMore }
            length = 0
            for index in 2..<10 { length = length << 8 | UInt64(input[start + index]) }
            offset = 10
        }
        if opcode >= close {
            guard fin, length <= 125 else { return .failure(code: 1002, reason: "a control frame must be whole and at most 125 bytes") }
        }
        guard length <= UInt64(limit) else { return .failure(code: 1009, reason: "message larger than \(limit) bytes") }
        let total = offset + 4 + Int(length)
        guard input.count >= total else { return .needMore }
        let mask = Array(input[(start + offset)..<(start + offset + 4)])
        var payload = Array(input[(start + offset + 4)..<(start + total)])
        for index in payload.indices { payload[index] ^= mask[index & 3] }
        return .frame(Frame(fin: fin, opcode: opcode, payload: payload), consumed: total)
    }
}
