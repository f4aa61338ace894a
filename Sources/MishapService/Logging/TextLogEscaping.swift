import MishapSupport

/// What a text log line may not hold as it is: control characters, DEL, U+2028 and U+2029 (a
/// request path decoded from `%0D%0A`, a rule name with a line break would otherwise start a
/// line of its own, a forged one), written as the JSON log writes them (`\r`, `\n`, `\t`,
/// `\u001b`, `\u2028`), and the backslash, written `\\` so an escape in the log is never a
/// backslash the text really held. Everything else is copied as it is.
enum TextLogEscaping {
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// The most bytes one byte takes once escaped (`\u001b`).
    static let longestEscape = 6

    /// Whether any byte needs an escape. Eight bytes at a time: a word in which no byte is
    /// below 0x20, a backslash, DEL or 0xE2 (the first byte of U+2028 and U+2029) holds nothing
    /// to escape, which is nearly every word of a log line; a word that may is looked at byte by
    /// byte (0xE2 starts other characters too). A byte loop cost about 8 instructions a byte.
    static func needsEscaping(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let count = bytes.count
        var index = 0
        while index + 8 <= count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            if mayNeedEscaping(word), needsEscaping(base, from: index, to: index + 8, count: count) { return true }
            index += 8
        }
        return needsEscaping(base, from: index, to: count, count: count)
    }

    /// Whether some byte of `word` is below 0x20, or is 0x5C, 0x7F or 0xE2 (bytes of 0x80 and
    /// above but 0xE2 never are): the classic test for a zero byte, on the word and on the word
    /// with each of those three bytes cleared.
    @inline(__always)
    private static func mayNeedEscaping(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ value: UInt64) -> UInt64 { (value &- ones) & ~value & highs }
        let below = (word &- 0x2020_2020_2020_2020) & ~word & highs
        return below | hasZero(word ^ 0x5C5C_5C5C_5C5C_5C5C) | hasZero(word ^ 0x7F7F_7F7F_7F7F_7F7F)
            | hasZero(word ^ 0xE2E2_E2E2_E2E2_E2E2) != 0
    }

    /// Whether a byte from `start` up to `end` needs an escape, looking past `end` (up to
    /// `count`) for the rest of a U+2028 or U+2029 that starts before it.
    private static func needsEscaping(_ base: UnsafePointer<UInt8>, from start: Int, to end: Int, count: Int) -> Bool {
        var index = start
        while index < end {
            let byte = base[index]
            index += 1
            if byte > 0x20, byte != 0x5C, byte != 0x7F, byte != 0xE2 { continue }
            if byte < 0x20 || byte == 0x5C || byte == 0x7F { return true }
            if byte == 0xE2, index + 1 < count, base[index] == 0x80, base[index + 1] == 0xA8 || base[index + 1] == 0xA9 {
                return true
            }
        }
        return false
    }

    /// Writes `bytes` escaped at `out`, which has room for `longestEscape` bytes for each;
    /// returns the count written.
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
            result = String(unsafeUninitializedCapacity: bytes.count * longestEscape) { buffer in
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
