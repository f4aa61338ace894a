/// The values of `format` that are checked: `email`, `uuid`, `date`, `date-time`, `uri` for
/// strings, `int32` and `int64` for numbers. Others are annotations only (the loader warns).
public enum StringFormat: String, Sendable, CaseIterable {
    case email
    case uuid
    case date
    case dateTime = "date-time"
    case uri
    case int32
    case int64

    /// Whether the format applies to strings (else to numbers).
    public var isString: Bool { self != .int32 && self != .int64 }

    /// Whether `text` (a string's value, or a number as written) is in this format.
    public func accepts(_ text: String) -> Bool {
        switch self {
        case .email: return Self.isEmail(text)
        case .uuid: return Self.isUUID(Array(text.utf8))
        case .date: return Self.isDate(Array(text.utf8)[...])
        case .dateTime: return Self.isDateTime(Array(text.utf8))
        case .uri: return Self.isURI(text)
        case .int32: return Double(text).map { $0 >= -2_147_483_648 && $0 <= 2_147_483_647 } ?? false
        case .int64: return Double(text).map { $0 >= -9_223_372_036_854_775_808 && $0 < 9_223_372_036_854_775_808 } ?? false
        }
    }

    /// `local@domain`: one `@`, a local part and a domain of dot-separated labels, no spaces or
    /// control characters (the shape of RFC 5321's addresses, not every rule of them).
    static func isEmail(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, parts[0].utf8.count <= 64 else { return false }
        guard text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !"()<>[]\\,;:\"".unicodeScalars.contains($0) })
        else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }
            && !parts[0].hasPrefix(".") && !parts[0].hasSuffix(".") && !parts[0].contains("..")
    }

    /// `8-4-4-4-12` hexadecimal digits (RFC 4122), either case.
    static func isUUID(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else if !isHex(byte) {
                return false
            }
        }
        return true
    }

    /// RFC 3339's `full-date`: `YYYY-MM-DD`, a day that month has (29 February in leap years).
    static func isDate(_ bytes: ArraySlice<UInt8>) -> Bool {
        let bytes = Array(bytes)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              let year = number(bytes[0..<4]), let month = number(bytes[5..<7]), let day = number(bytes[8..<10]),
              (1...12).contains(month), day >= 1 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return day <= days
    }

    /// RFC 3339's `date-time`: a date, `T` (or `t`), `hh:mm:ss`, an optional fraction, and `Z`
    /// or an offset `±hh:mm`.
    static func isDateTime(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 20, isDate(bytes[0..<10]), bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let hour = number(bytes[11..<13]), let minute = number(bytes[14..<16]), let second = number(bytes[17..<19]),
              hour <= 23, minute <= 59, second <= 60 else { return false }
        var index = 19
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            guard index > start, index < bytes.count else { return false }
        }
        let zone = bytes[index...]
        if zone.count == 1 { return zone.first == UInt8(ascii: "Z") || zone.first == UInt8(ascii: "z") }
        guard zone.count == 6, zone.first == UInt8(ascii: "+") || zone.first == UInt8(ascii: "-"),
              zone[index + 3] == UInt8(ascii: ":"), let hours = number(zone[(index + 1)..<(index + 3)]),
              let minutes = number(zone[(index + 4)..<(index + 6)]) else { return false }
        return hours <= 23 && minutes <= 59
    }

    /// An absolute URI (RFC 3986): a scheme (a letter, then letters, digits, `+`, `-`, `.`),
    /// `:`, and no spaces or control characters.
    static func isURI(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else { return false }
        let scheme = text[..<colon]
        guard scheme.first!.isASCII, scheme.first!.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return false }
        return text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F && !"<>\"{}|\\^`".unicodeScalars.contains($0) }
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard isDigit(digit) else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func isHex(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
    }
}
