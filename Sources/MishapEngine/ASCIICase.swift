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
        return a.count == b.count && zip(a, b).allSatisfy { $0.equalsIgnoringASCIICase($1) }
    }
}
