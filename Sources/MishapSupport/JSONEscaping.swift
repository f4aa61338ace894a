/// Text written inside a JSON string literal, the one way every part of Mishap writes it
/// (response placeholders, error bodies, admin answers, log lines).
public enum JSONEscaping {
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `text` escaped as the inside of a JSON string: quotes, backslashes, control
    /// characters and DEL are escaped, and so are U+2028 and U+2029 (valid in JSON, but line
    /// ends to JavaScript), so the result is valid JSON, and JavaScript, whatever the text holds.
    public static func appendEscaped(_ text: String, to out: inout [UInt8]) {
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(byte)
            case 0x0A: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
            case 0x00..<0x20, 0x7F:
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            case 0xE2:
                // U+2028 and U+2029 are E2 80 A8 and E2 80 A9; other scalars starting E2 pass.
                guard let second = utf8.next() else { out.append(byte); continue }
                guard second == 0x80, let third = utf8.next() else { out.append(byte); out.append(second); continue }
                if third == 0xA8 || third == 0xA9 {
                    out.append(contentsOf: Array(third == 0xA8 ? "\\u2028".utf8 : "\\u2029".utf8))
                } else {
                    out.append(byte); out.append(second); out.append(third)
                }
            default: out.append(byte)
            }
        }
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
