/// Reading a `Range` header (RFC 9110, section 14.1.2) against a body of known length.
enum RangeRequest {
    /// What the header asks of a body.
    enum Answer: Equatable {
        /// The whole body, 200: no range, or a header that is ignored (another unit than
        /// `bytes`, a syntax error, several ranges).
        case whole
        /// These bytes of the body, 206.
        case part(Range<Int>)
        /// No byte asked exists, 416.
        case unsatisfiable
    }

    /// The answer to `header` for a body of `total` bytes.
    ///
    /// Several ranges (`bytes=0-9,20-29`) get the whole body rather than a
    /// `multipart/byteranges` answer: RFC 9110 lets a server ignore a `Range`, and download
    /// clients ask for one range at a time. The header is read once, without allocating.
    static func answer(to header: String, total: Int) -> Answer {
        var bytes = Substring(header).utf8[...]
        trimSpaces(&bytes)
        let unit = "bytes=".utf8
        guard bytes.count > unit.count,
              zip(bytes.prefix(unit.count), unit).allSatisfy({ lowercased($0) == $1 }) else { return .whole }
        bytes = bytes.dropFirst(unit.count)
        // More than one range (empty list elements aside, which RFC 9110 allows): the whole body.
        let specs = bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true)
            .filter { !$0.allSatisfy(isSpace) }
        guard specs.count == 1, var spec = specs.first else { return .whole }
        trimSpaces(&spec)
        guard let dash = spec.firstIndex(of: UInt8(ascii: "-")) else { return .whole }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            // A suffix: the last N bytes.
            guard let length = number(last) else { return .whole }
            guard length > 0, total > 0 else { return .unsatisfiable }
            return .part(max(total - length, 0)..<total)
        }
        guard let start = number(first) else { return .whole }
        var end = Int.max
        if !last.isEmpty {
            guard let value = number(last) else { return .whole }
            // last < first is a syntax error: ignored, not unsatisfiable.
            guard value >= start else { return .whole }
            end = value
        }
        guard start < total else { return .unsatisfiable }
        return .part(start..<(min(end, total - 1) + 1))
    }

    /// Decimal digits as a number, saturated at `Int.max` (a position past any body); nil for
    /// anything but digits.
    private static func number(_ digits: Substring.UTF8View.SubSequence) -> Int? {
        guard !digits.isEmpty else { return nil }
        var value = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            value = overflowA || overflowB ? Int.max : sum
        }
        return value
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    private static func trimSpaces(_ bytes: inout Substring.UTF8View.SubSequence) {
        while let first = bytes.first, isSpace(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, isSpace(last) { bytes = bytes.dropLast() }
    }
}
