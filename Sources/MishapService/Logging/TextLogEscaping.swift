import MishapSupport

/// What a text log line may not hold as it is: control characters, DEL, U+2028 and U+2029 (a
/// request path decoded from `%0D%0A`, a rule name with a line break would otherwise start a
/// line of its own, a forged one), written as the JSON log writes them (`\r`, `\n`, `\t`,
/// `\u001b`, `\u2028`), and the backslash, written `\\` so an escape in the log is never a
/// backslash the text really held. Everything else is copied as it is.
enum TextLogEscaping {
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// The most bytes `bytes` takes once escaped: its own count when nothing in it needs an
    /// escape (nearly always), six bytes for each otherwise.
    static func bound(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        needsEscaping(bytes) ? bytes.count * 6 : bytes.count
    }

    /// The same for a string's bytes.
    static func bound(_ text: String) -> Int {
        var result = 0
        RequestLogLine.withUTF8(of: text) { result = bound($0) }
        return result
    }

    /// Whether any byte needs an escape. Bytes at or above 0x21 other than the backslash, DEL
    /// and 0xE2 (the first byte of U+2028 and U+2029) never do: one comparison for most.
    static func needsEscaping(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte > 0x20, byte != 0x5C, byte != 0x7F, byte != 0xE2 { continue }
            if byte < 0x20 || byte == 0x5C || byte == 0x7F { return true }
            if byte == 0xE2, index + 1 < bytes.count, bytes[index] == 0x80, bytes[index + 1] == 0xA8 || bytes[index + 1] == 0xA9 {
                return true
            }
        }
        return false
    }

    /// Writes `bytes` escaped at `out`, which has room for `bound(bytes)`; returns the count
    /// written.
    static func write(_ bytes: UnsafeBufferPointer<UInt8>, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var at = out
        func put(_ byte: UInt8) {
            at.initialize(to: byte)
            at += 1
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case 0x5C: put(0x5C); put(0x5C)
            case 0x0A: put(0x5C); put(UInt8(ascii: "n"))
            case 0x0D: put(0x5C); put(UInt8(ascii: "r"))
            case 0x09: put(0x5C); put(UInt8(ascii: "t"))
            case 0..<0x20, 0x7F:
                put(0x5C); put(UInt8(ascii: "u")); put(UInt8(ascii: "0")); put(UInt8(ascii: "0"))
                put(hex[Int(byte >> 4)]); put(hex[Int(byte & 0xF)])
            case 0xE2 where index + 1 < bytes.count && bytes[index] == 0x80 && (bytes[index + 1] == 0xA8 || bytes[index + 1] == 0xA9):
                put(0x5C); put(UInt8(ascii: "u")); put(UInt8(ascii: "2")); put(UInt8(ascii: "0")); put(UInt8(ascii: "2"))
                put(bytes[index + 1] == 0xA8 ? UInt8(ascii: "8") : UInt8(ascii: "9"))
                index += 2
            default:
                put(byte)
            }
        }
        return at - out
    }

    /// `text` escaped, for the lines written through swift-log.
    static func escaped(_ text: String) -> String {
        var result = text
        RequestLogLine.withUTF8(of: text) { bytes in
            guard needsEscaping(bytes) else { return }
            result = String(unsafeUninitializedCapacity: bytes.count * 6) { buffer in
                write(bytes, to: buffer.baseAddress!)
            }
        }
        return result
    }
}

extension LineCursor {
    /// The string's UTF-8 bytes, escaped for a text log line (`TextLogEscaping`).
    mutating func escapedText(_ string: String) {
        var at = self.at
        RequestLogLine.withUTF8(of: string) { bytes in
            if TextLogEscaping.needsEscaping(bytes) {
                at += TextLogEscaping.write(bytes, to: at)
            } else {
                if let base = bytes.baseAddress { at.initialize(from: base, count: bytes.count) }
                at += bytes.count
            }
        }
        self.at = at
    }

    /// `key` (with its leading space and `=`) and the value escaped (`TextLogEscaping`), in
    /// quotes when it is empty or holds a space, as `LineLogHandler` writes metadata.
    mutating func escapedPair(_ key: StaticString, _ value: String) {
        literal(key)
        var quoted = false
        RequestLogLine.withUTF8(of: value) { bytes in
            quoted = bytes.isEmpty || ByteSearch.contains(UInt8(ascii: " "), in: bytes)
        }
        if quoted { byte(UInt8(ascii: "\"")) }
        escapedText(value)
        if quoted { byte(UInt8(ascii: "\"")) }
    }
}
