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
