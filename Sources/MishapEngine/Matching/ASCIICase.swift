import MishapSupport

extension UInt8 {
    /// Equal, or the same ASCII letter in another case.
    func equalsIgnoringASCIICase(_ other: UInt8) -> Bool {
        if self == other { return true }
        let folded = self | 0x20
        return folded == other | 0x20 && folded >= UInt8(ascii: "a") && folded <= UInt8(ascii: "z")
    }
}

extension String {
    /// Compares two strings byte by byte, folding ASCII letters only (as HTTP header names do).
    public func equalsIgnoringASCIICase(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        return a.count == b.count && Self.sameBytesIgnoringASCIICase(self, other)
    }

    /// The byte comparison of two views of the same length, kept out of line so the length
    /// check (which settles most header-name lookups) stays cheap where it is inlined. Over the
    /// bytes in place (native strings always have them): zipping the two UTF-8 views stepped
    /// through each string's index machinery, about 100 instructions a byte.
    @inline(never)
    private static func sameBytesIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        let compared = a.withUTF8Bytes(and: b) { left, right in
            left.indices.allSatisfy { left[$0].equalsIgnoringASCIICase(right[$0]) }
        }
        return compared ?? zip(a.utf8, b.utf8).allSatisfy { $0.equalsIgnoringASCIICase($1) }
    }
}
