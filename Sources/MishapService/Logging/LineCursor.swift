import MishapSupport

/// Where the next byte of a log line goes, in a buffer its writer sized for the whole line
/// (`RequestLogLine.textBound`): each piece is copied by pointer, with no capacity check and no
/// array bookkeeping. Only for lines whose size is known in advance.
struct LineCursor {
    var at: UnsafeMutablePointer<UInt8>

    mutating func byte(_ value: UInt8) {
        at.initialize(to: value)
        at += 1
    }

    /// A literal's bytes.
    mutating func literal(_ text: StaticString) {
        let count = text.utf8CodeUnitCount
        at.initialize(from: text.utf8Start, count: count)
        at += count
    }

    /// The string's UTF-8 bytes, from its own storage.
    mutating func text(_ string: String) {
        var at = self.at
        RequestLogLine.withUTF8(of: string) { bytes in
            if let base = bytes.baseAddress { at.initialize(from: base, count: bytes.count) }
            at += bytes.count
        }
        self.at = at
    }

    /// `key` (with its leading space and `=`) and the value, in quotes when it is empty or
    /// holds a space, as `LineLogHandler` writes metadata.
    mutating func pair(_ key: StaticString, _ value: String) {
        literal(key)
        var at = self.at
        RequestLogLine.withUTF8(of: value) { bytes in
            let quoted = bytes.isEmpty || ByteSearch.contains(UInt8(ascii: " "), in: bytes)
            if quoted { at.initialize(to: UInt8(ascii: "\"")); at += 1 }
            if let base = bytes.baseAddress { at.initialize(from: base, count: bytes.count) }
            at += bytes.count
            if quoted { at.initialize(to: UInt8(ascii: "\"")); at += 1 }
        }
        self.at = at
    }

    /// A whole number in decimal (at most 20 digits and a sign).
    mutating func decimal(_ value: Int) {
        if value < 0 { byte(UInt8(ascii: "-")) }
        var rest = value.magnitude
        var digits = 1
        var scan = rest
        while scan >= 10 {
            scan /= 10
            digits += 1
        }
        var position = at + digits
        repeat {
            position -= 1
            position.initialize(to: UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        at += digits
    }

    /// `hundredths / 100` as Swift prints that `Double`: `0.05`, `0.5`, `1.0`, `12.34`.
    mutating func hundredths(_ hundredths: Int) {
        decimal(hundredths / 100)
        byte(UInt8(ascii: "."))
        let fraction = hundredths % 100
        if fraction == 0 {
            byte(UInt8(ascii: "0"))
        } else {
            byte(UInt8(ascii: "0") + UInt8(fraction / 10))
            if fraction % 10 != 0 { byte(UInt8(ascii: "0") + UInt8(fraction % 10)) }
        }
    }
}
