/// Text written inside a JSON string literal, the one way every part of Mishap writes it
/// (response placeholders, error bodies, admin answers, log lines).
public enum JSONEscaping {
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `text` escaped as the inside of a JSON string: quotes, backslashes, control
    /// characters and DEL are escaped, and so are U+2028 and U+2029 (valid in JSON, but line
    /// ends to JavaScript), so the result is valid JSON, and JavaScript, whatever the text holds.
    public static func appendEscaped(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { appendEscaped($0, to: &out) }
    }

    /// The same for the bytes of valid UTF-8 text. Runs of bytes that need no escape (nearly
    /// all of them) are copied at once.
    public static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") && byte != 0x7F && byte != 0xE2 {
                index += 1
                continue
            }
            if runStart < index { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
            index += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(byte)
            case 0x0A: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
            case 0xE2:
                // U+2028 and U+2029 are E2 80 A8 and E2 80 A9; other scalars starting E2 pass
                // (their continuation bytes are never escaped, so the scan goes on after E2).
                if index + 1 < count, bytes[index] == 0x80, bytes[index + 1] == 0xA8 || bytes[index + 1] == 0xA9 {
                    out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "2"), UInt8(ascii: "0"),
                                            UInt8(ascii: "2"), bytes[index + 1] == 0xA8 ? UInt8(ascii: "8") : UInt8(ascii: "9")])
                    index += 2
                } else {
                    out.append(byte)
                }
            default:
                // The other control characters and DEL.
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            }
            runStart = index
        }
        if runStart < count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<count])) }
    }

    /// `text` as a JSON string literal, quotes included.
    public static func quoted(_ text: String) -> String {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        out.reserveCapacity(text.utf8.count + 2)
        appendEscaped(text, to: &out)
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }
}

/// The body of every JSON error Mishap itself sends (404 with no endpoint, 413, 431, admin
/// errors): `{"error":true,"reason":"..."}`.
public enum ErrorBody {
    /// `{"error":true,"reason":"<reason, escaped>"}`.
    public static func json(reason: String) -> [UInt8] {
        var body = Array(#"{"error":true,"reason":""#.utf8)
        JSONEscaping.appendEscaped(reason, to: &body)
        body += Array(#""}"#.utf8)
        return body
    }
}
