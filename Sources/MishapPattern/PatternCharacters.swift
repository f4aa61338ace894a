/// Character tests shared by the matchers and the program that runs them.
enum PatternCharacters {
    /// Literal comparison as Swift's `Regex` does it: without case through lowercase forms; an
    /// ASCII pattern character only matches that very byte; any other by canonical equivalence.
    static func equal(_ character: Character, _ expected: Character, folded: String?) -> Bool {
        if let folded { return character.lowercased() == folded }
        if let byte = expected.singleASCIIByte { return character.singleASCIIByte == byte }
        return character == expected
    }

    /// Whether a one-byte ASCII character is a newline (LF, VT, FF, CR), as `Character.isNewline`.
    static func isNewline(byte: UInt8) -> Bool {
        byte >= 0x0A && byte <= 0x0D
    }
}

extension Character {
    /// The byte of a one-byte ASCII character; nil for anything else, CR-LF included.
    var singleASCIIByte: UInt8? {
        let utf8 = self.utf8
        return utf8.count == 1 ? utf8.first : nil
    }

    /// The single scalar the character composes to (NFC), as character class ranges compare it;
    /// nil when it needs several (`q` with an accent has no precomposed form). The standard
    /// library's `_nfcCodeUnits` is the normalization Swift's `Regex` itself uses.
    var composedScalar: Unicode.Scalar? {
        let scalars = unicodeScalars
        if scalars.count == 1 { return scalars.first }
        return String(decoding: String(self)._nfcCodeUnits, as: UTF8.self).singleScalar
    }
}

extension String {
    /// The only scalar of a one-scalar string.
    var singleScalar: Unicode.Scalar? {
        var scalars = unicodeScalars.makeIterator()
        guard let first = scalars.next(), scalars.next() == nil else { return nil }
        return first
    }
}
