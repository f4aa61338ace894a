import MishapSupport

/// `prefix` and `suffix` conditions decided over bytes where that gives `String`'s answer:
/// `String.hasPrefix` compares characters (grapheme clusters, canonically equivalent), about
/// 100 instructions a character, and a login catalogue tests a dozen prefixes of one value per
/// request. The affix must be ASCII. Then, comparing the bytes where it would sit in the value:
/// - different ASCII bytes there: no (no other spelling of an ASCII character is ASCII);
/// - equal bytes: yes, when the byte just beyond them is ASCII or absent, and does not make a
///   CR LF (one character) with the affix's edge; beyond ASCII it could join the last (or,
///   before a suffix, the first) character, so the standard library decides.
/// Each function returns nil when the bytes cannot decide: a non-ASCII affix or value bytes, a
/// split CR LF, or a value shorter than the affix whose bytes are not all ASCII.
///
/// `contains` (an infix, anywhere in the value) is decided over bytes when the value and the
/// part are ASCII and the value has no CR: then every byte is one character, and the only
/// spelling of an ASCII character is its byte, so a byte search finds exactly the characters.
/// The standard library's `contains` searches characters generically, about 5,000 instructions
/// for the login catalogue's one `@`.
enum ASCIIAffix {
    private static let carriageReturn = UInt8(ascii: "\r"), lineFeed = UInt8(ascii: "\n")

    static func hasPrefix(_ value: String, _ prefix: String) -> Bool? {
        value.withUTF8Bytes(and: prefix) { value, prefix -> Bool? in
            for offset in 0..<min(prefix.count, value.count) {
                let byte = prefix[offset], other = value[offset]
                if byte >= 0x80 || other >= 0x80 { return nil }
                if byte != other { return false }
            }
            // Equal as far as both go: an ASCII value shorter than the prefix has fewer characters.
            guard prefix.count <= value.count else { return prefix[value.count...].allSatisfy { $0 < 0x80 } ? false : nil }
            guard prefix.count < value.count else { return true }
            let next = value[prefix.count]
            if next >= 0x80 || (next == lineFeed && prefix.last == carriageReturn) { return nil }
            return true
        } ?? nil
    }

    static func hasSuffix(_ value: String, _ suffix: String) -> Bool? {
        value.withUTF8Bytes(and: suffix) { value, suffix -> Bool? in
            // From the end back, as far as both go.
            for back in 0..<min(suffix.count, value.count) {
                let byte = suffix[suffix.count - 1 - back], other = value[value.count - 1 - back]
                if byte >= 0x80 || other >= 0x80 { return nil }
                if byte != other { return false }
            }
            guard suffix.count <= value.count else {
                return suffix[..<(suffix.count - value.count)].allSatisfy { $0 < 0x80 } ? false : nil
            }
            let start = value.count - suffix.count
            guard start > 0 else { return true }
            let before = value[start - 1]
            if before >= 0x80 || (before == carriageReturn && suffix.first == lineFeed) { return nil }
            return true
        } ?? nil
    }

    static func contains(_ value: String, _ part: String) -> Bool? {
        value.withUTF8Bytes(and: part) { value, part -> Bool? in
            guard let first = part.first, part.allSatisfy({ $0 < 0x80 }),
                  value.allSatisfy({ $0 < 0x80 && $0 != carriageReturn }) else { return nil }
            guard part.count <= value.count else { return false }
            for start in 0...(value.count - part.count) where value[start] == first {
                var offset = 1
                while offset < part.count, value[start + offset] == part[offset] { offset += 1 }
                if offset == part.count { return true }
            }
            return false
        } ?? nil
    }
}
