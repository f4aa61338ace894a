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
