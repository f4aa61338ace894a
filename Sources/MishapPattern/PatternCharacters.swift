/// What one step of a pattern accepts: a single character (grapheme cluster) of the value.
///
/// The rules follow Swift's `Regex` in its default, character-based mode. `matches(_:)` decides for
/// any character; the compiled program also keeps, for each matcher, the answer for the 128
/// one-byte ASCII characters, so the common case is a bit test.
enum CharacterMatcher: Sendable {
    /// One character. `folded` holds its lowercase form when it is compared without case.
    case literal(Character, folded: String?)
    /// `.`: any character but a newline.
    case anyExceptNewline
    /// `.` under the `s` flag: any character.
    case any
    /// `[...]` or an escape such as `\d`.
    case set(CharacterClass)

    /// The literal `character`, compared without case when `caseInsensitive` and it has case.
    static func literal(_ character: Character, caseInsensitive: Bool) -> CharacterMatcher {
        .literal(character, folded: caseInsensitive && character.isCased ? character.lowercased() : nil)
    }

    /// Identifies the matcher by its exact scalars, where `==` compares characters by canonical
    /// equivalence.
    var key: [UInt32] {
        func scalars(_ character: Character) -> [UInt32] {
            [UInt32(character.unicodeScalars.count)] + character.unicodeScalars.map(\.value)
        }
        switch self {
        case .literal(let character, let folded):
            return [0, folded == nil ? 0 : 1] + scalars(character)
        case .anyExceptNewline:
            return [1]
        case .any:
            return [2]
        case .set(let set):
            var key: [UInt32] = [3, set.isInverted ? 1 : 0, set.isCaseInsensitive ? 1 : 0]
            for member in set.members {
                switch member {
                case .character(let character): key += [0] + scalars(character)
                case .range(let low, let high): key += [1, low.value, high.value]
                case .builtin(let builtin, let inverted): key += [2, builtin.rawValue, inverted ? 1 : 0]
                }
            }
            return key
        }
    }

    func matches(_ character: Character) -> Bool {
        switch self {
        case .literal(let expected, let folded):
            return PatternCharacters.equal(character, expected, folded: folded)
        case .anyExceptNewline:
            return !character.isNewline
        case .any:
            return true
        case .set(let set):
            return set.matches(character)
        }
    }
}

/// A character class: `[a-z_]`, `[^\s]`, or a single escape such as `\w`.
struct CharacterClass: Sendable {
    enum Member: Sendable {
        case character(Character)
        /// A range between two scalars, compared with the character's composed (NFC) scalar.
        case range(Unicode.Scalar, Unicode.Scalar)
        case builtin(BuiltinClass, inverted: Bool)
    }

    let members: [Member]
    let isInverted: Bool
    let isCaseInsensitive: Bool
    /// Whether every member is an ASCII character or a range of them. Swift then matches the class
    /// against single-byte ASCII characters only: `(?i)[a-z]` does not take the Kelvin sign `K`.
    let isASCIIOnly: Bool

    init(_ members: [Member], inverted: Bool, caseInsensitive: Bool) {
        self.members = members
        self.isInverted = inverted
        self.isCaseInsensitive = caseInsensitive
        self.isASCIIOnly = members.allSatisfy {
            switch $0 {
            case .character(let character): return character.singleASCIIByte != nil
            case .range(let low, let high): return low.isASCII && high.isASCII
            case .builtin: return false
            }
        }
    }

    func matches(_ character: Character) -> Bool {
        if isASCIIOnly && character.singleASCIIByte == nil {
            // Swift tests CR-LF against such a class as its CR: `[^\r]` and `[\r]` both refuse it.
            if isInverted && character == "\r\n" { return !members.contains { contains($0, "\r") } }
            return isInverted
        }
        return members.contains { contains($0, character) } != isInverted
    }

    private func contains(_ member: Member, _ character: Character) -> Bool {
        switch member {
        case .character(let expected):
            let folded = isCaseInsensitive && expected.isCased ? expected.lowercased() : nil
            return PatternCharacters.equal(character, expected, folded: folded)
        case .range(let low, let high):
            guard let scalar = character.composedScalar else { return false }
            let range = low...high
            if range.contains(scalar) { return true }
            guard isCaseInsensitive else { return false }
            let properties = scalar.properties
            if properties.changesWhenLowercased, let lower = properties.lowercaseMapping.singleScalar,
               range.contains(lower) {
                return true
            }
            if properties.changesWhenUppercased, let upper = properties.uppercaseMapping.singleScalar,
               range.contains(upper) {
                return true
            }
            return false
        case .builtin(let builtin, let inverted):
            return builtin.matches(character) != inverted
        }
    }
}

/// The classes written as escapes: `\d \w \s \h \v`.
enum BuiltinClass: UInt32, Hashable, Sendable {
    /// `\d`: a character with a numeric value (`Character.isNumber`, so `٣` and `½` too).
    case digit
    /// `\w`: a letter, a number or `_`.
    case word
    /// `\s`: whitespace, newlines included.
    case whitespace
    /// `\h`: a tab or a space separator.
    case horizontalWhitespace
    /// `\v`: a newline or a vertical tab, form feed, carriage return, NEL, LS or PS.
    case verticalWhitespace

    func matches(_ character: Character) -> Bool {
        switch self {
        case .digit:
            return character.isNumber
        case .word:
            return character.isLetter || character.isNumber || character == "_"
        case .whitespace:
            return character.isWhitespace
        case .horizontalWhitespace:
            let first = character.unicodeScalars.first!
            return first == "\t" || first.properties.generalCategory == .spaceSeparator
        case .verticalWhitespace:
            switch character.unicodeScalars.first!.value {
            case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return true
            default: return false
            }
        }
    }
}

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
