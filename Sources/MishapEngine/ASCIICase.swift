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
        return a.count == b.count && Self.sameBytesIgnoringASCIICase(a, b)
    }

    /// The byte comparison of two views of the same length, kept out of line so the length
    /// check (which settles most header-name lookups) stays cheap where it is inlined. Over the
    /// bytes in place (native strings always have them): zipping the two UTF-8 views stepped
    /// through each string's index machinery, about 100 instructions a byte.
    @inline(never)
    private static func sameBytesIgnoringASCIICase(_ a: String.UTF8View, _ b: String.UTF8View) -> Bool {
        let compared = a.withContiguousStorageIfAvailable { left in
            b.withContiguousStorageIfAvailable { right in
                for offset in 0..<left.count where !left[offset].equalsIgnoringASCIICase(right[offset]) { return false }
                return true
            }
        }
        if let compared, let compared { return compared }
        return zip(a, b).allSatisfy { $0.equalsIgnoringASCIICase($1) }
    }
}
