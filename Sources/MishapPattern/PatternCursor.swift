/// One character of the value, as the matcher reads it.
struct PatternUnit {
    /// The byte of a one-byte ASCII character, answered from the instructions' ASCII bits; nil
    /// for any other character (CR-LF included).
    var byte: UInt8?
    /// The character itself, read only when `byte` is nil.
    var character: Character
    var utf8Count: Int

    var isNewline: Bool {
        if let byte { return PatternCharacters.isNewline(byte: byte) }
        return character.isNewline
    }
}

/// The characters of a value, in order.
protocol PatternCursor {
    mutating func next() -> PatternUnit?
}

struct CharacterCursor: PatternCursor {
    var characters: String.Iterator

    mutating func next() -> PatternUnit? {
        guard let character = characters.next() else { return nil }
        let utf8 = character.utf8
        let count = utf8.count
        return PatternUnit(byte: count == 1 ? utf8.first : nil, character: character, utf8Count: count)
    }
}

/// The characters of an all-ASCII value: one per byte, except CR-LF, which is one character.
struct ASCIICursor: PatternCursor {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    mutating func next() -> PatternUnit? {
        guard index < bytes.count else { return nil }
        let byte = bytes[index]
        if byte == 0x0D, index + 1 < bytes.count, bytes[index + 1] == 0x0A {
            index += 2
            return PatternUnit(byte: nil, character: "\r\n", utf8Count: 2)
        }
        index += 1
        return PatternUnit(byte: byte, character: " ", utf8Count: 1)
    }
}
