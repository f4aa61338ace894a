// Parsing `[...]` character classes.
extension PatternParser {
    // MARK: Character classes

    mutating func parseClass(_ flags: Flags) throws(PatternError) -> CharacterClass {
        let open = position
        position += 1
        let inverted = peek == "^"
        if inverted { position += 1 }
        if peek == "]" {
            throw PatternError("a character class cannot start with ']': write '\\]' for a literal ']'", at: position)
        }
        var members: [CharacterClass.Member] = []
        while true {
            if flags.extended { skipTrivia() }
            guard let character = peek else {
                throw PatternError("missing ']' to close the character class", at: open)
            }
            if character == "]" {
                position += 1
                break
            }
            if character == "\\", peek(1) == "Q" {
                members += parseQuotedText().map(CharacterClass.Member.character)
                continue
            }
            if character == "[" {
                if peek(1) == ":" {
                    throw unsupported("POSIX classes such as '[:alpha:]'; use \\d, \\w, \\s or a range", at: position)
                }
                throw unsupported("nested character classes; write '\\[' for a literal '['", at: position)
            }
            if ["&", "-", "~"].contains(character), peek(1) == character {
                throw unsupported("the class operator '\(character)\(character)'; escape it as '\\\(character)' for literal characters", at: position)
            }
            let lowStart = position
            let low = try parseClassMember(flags)
            let lowEnd = position
            if flags.extended { skipTrivia() }
            guard peek == "-", let after = firstAfterDash(flags), after != "]" else {
                // A mark written as an escape joins the character before it, as outside a class:
                // [a\u{301}] holds the single character á.
                if case .character(let mark) = low, case .character(let base)? = members.last,
                   (String(base) + String(mark)).count == 1 {
                    members[members.count - 1] = .character(Character(String(base) + String(mark)))
                } else {
                    members.append(low)
                }
                continue
            }
            if after == "-" {
                throw unsupported("the class operator '--'; escape it as '\\-' for literal characters", at: position)
            }
            position += 1
            if flags.extended { skipTrivia() }
            let highStart = position
            let high = try parseClassMember(flags)
            guard case .character(let lowCharacter) = low, let lowScalar = lowCharacter.unicodeScalars.first,
                  lowCharacter.unicodeScalars.count == 1 else {
                throw PatternError("invalid range bound '\(text(from: lowStart, to: lowEnd))': a range needs single characters", at: lowStart)
            }
            guard case .character(let highCharacter) = high, let highScalar = highCharacter.unicodeScalars.first,
                  highCharacter.unicodeScalars.count == 1 else {
                throw PatternError("invalid range bound '\(text(from: highStart, to: position))': a range needs single characters", at: highStart)
            }
            guard lowScalar <= highScalar else {
                throw PatternError("invalid range '\(text(from: lowStart, to: position))': '\(lowCharacter)' comes after '\(highCharacter)'", at: lowStart)
            }
            members.append(.range(lowScalar, highScalar))
        }
        return CharacterClass(members, inverted: inverted, caseInsensitive: flags.caseInsensitive)
    }

    /// What follows the `-` at `position`, past whitespace under the `x` flag.
    func firstAfterDash(_ flags: Flags) -> Character? {
        var copy = self
        copy.position += 1
        if flags.extended { copy.skipTrivia() }
        return copy.peek
    }

    mutating func parseClassMember(_ flags: Flags) throws(PatternError) -> CharacterClass.Member {
        let character = characters[position]
        guard character == "\\" else {
            position += 1
            return .character(character)
        }
        if peek(1) == "b" {
            position += 2
            return .character("\u{8}")
        }
        let start = position
        switch try parseEscape() {
        case .scalar(let scalar):
            return .character(Character(scalar))
        case .builtin(let builtin, let inverted):
            return .builtin(builtin, inverted: inverted)
        case .assertion:
            throw PatternError("the anchor '\(text(from: start, to: position))' cannot be used in a character class", at: start)
        }
    }
}
