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
