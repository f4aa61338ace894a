/// Reads an expression into a ``PatternNode``, refusing what cannot be matched in linear time.
///
/// The source is read by characters, as Swift's `Regex` parser does, and errors give the offset in
/// characters.
struct PatternParser {
    /// The most repetitions one quantifier may ask for.
    static let repetitionLimit = 10_000
    /// The deepest nesting of groups.
    static let depthLimit = 200

    private struct Flags {
        var caseInsensitive = false
        var dotMatchesNewlines = false
        var multiline = false
        var extended = false
    }

    /// A sequence element before adjacent literals are joined into characters.
    private enum Piece {
        /// Literal text: one character of the source, or one scalar from an escape.
        case literal(String, caseInsensitive: Bool)
        case node(PatternNode)
        /// A flag change such as `(?s)`: literals on either side are not joined.
        case boundary

        /// The piece on its own, as a quantifier takes it: a literal is one character.
        var node: PatternNode {
            switch self {
            case .literal(let text, let caseInsensitive):
                return .atom(.literal(Character(text), caseInsensitive: caseInsensitive))
            case .node(let node):
                return node
            case .boundary:
                return .empty
            }
        }
    }

    private enum Group {
        case group(PatternNode)
        case flagChange
        case comment
    }

    private let characters: [Character]
    private var position = 0
    private var depth = 0

    init(_ source: String) {
        characters = Array(source)
    }

    mutating func parse() throws(PatternError) -> PatternNode {
        var flags = Flags()
        let node = try parseAlternation(&flags)
        if position < characters.count {
            throw PatternError("unbalanced ')': no group is open", at: position)
        }
        return node
    }

    // MARK: Structure

    /// Alternatives up to the end of the group. An inline flag such as `(?i)` changes the rest of
    /// the group, alternatives after it included.
    private mutating func parseAlternation(_ flags: inout Flags) throws(PatternError) -> PatternNode {
        var alternatives = [try parseSequence(&flags)]
        while peek == "|" {
            position += 1
            alternatives.append(try parseSequence(&flags))
        }
        return alternatives.count == 1 ? alternatives[0] : .alternation(alternatives)
    }

    private mutating func parseSequence(_ flags: inout Flags) throws(PatternError) -> PatternNode {
        var pieces: [Piece] = []
        while true {
            if flags.extended { skipTrivia() }
            guard let character = peek, character != "|", character != ")" else { break }
            let start = position
            if let end = peekQuantifier() {
                throw PatternError("quantifier '\(text(from: start, to: end))' has nothing to repeat", at: start)
            }
            var piece: Piece
            /// Why a quantifier cannot follow, if it cannot.
            var unrepeatable: String?
            let anchor = "is an anchor and cannot be repeated"
            switch character {
            case "(":
                switch try parseGroup(&flags) {
                case .group(let group):
                    piece = .node(group)
                case .flagChange:
                    pieces.append(.boundary)
                    continue
                case .comment:
                    continue
                }
            case "[":
                piece = .node(.atom(.set(try parseClass(flags))))
            case ".":
                position += 1
                piece = .node(.atom(flags.dotMatchesNewlines ? .any : .anyExceptNewline))
            case "^":
                position += 1
                piece = .node(.assertion(flags.multiline ? .startOfLine : .startOfSubject))
                unrepeatable = anchor
            case "$":
                position += 1
                piece = .node(.assertion(flags.multiline ? .endOfLine : .endOfSubject))
                unrepeatable = anchor
            case "\\" where peek(1) == "Q":
                piece = .literal(parseQuotedText(), caseInsensitive: flags.caseInsensitive)
                unrepeatable = "is quoted text: put it in a group '(?:...)' to repeat it"
            case "\\":
                switch try parseEscape() {
                case .scalar(let scalar):
                    piece = .literal(String(scalar), caseInsensitive: flags.caseInsensitive)
                case .builtin(let builtin, let inverted):
                    let set = CharacterClass([.builtin(builtin, inverted: inverted)], inverted: false,
                                             caseInsensitive: flags.caseInsensitive)
                    piece = .node(.atom(.set(set)))
                case .assertion(let assertion):
                    piece = .node(.assertion(assertion))
                    unrepeatable = anchor
                }
            default:
                let scalars = Array(character.unicodeScalars)
                if scalars.count > 1, "\\^$.|?*+()[]{}".unicodeScalars.contains(scalars[0]) {
                    let mark = String(scalars[1].value, radix: 16, uppercase: true)
                    throw PatternError("'\(scalars[0])' followed by a combining mark is not a metacharacter; write the mark as \\u{\(mark)}", at: start)
                }
                position += 1
                piece = .literal(String(character), caseInsensitive: flags.caseInsensitive)
            }
            if let quantifier = try parseQuantifier(flags) {
                if let unrepeatable {
                    throw PatternError("'\(text(from: start, to: quantifier.start))' \(unrepeatable)", at: quantifier.start)
                }
                piece = .node(.repetition(piece.node, min: quantifier.min, max: quantifier.max))
                if flags.extended { skipTrivia() }
                if let next = peekQuantifier() {
                    throw PatternError("quantifier '\(text(from: position, to: next))' follows another quantifier; put the first in a group '(?:...)' to repeat it", at: position)
                }
            }
            pieces.append(piece)
        }
        return Self.join(pieces)
    }

    /// `\Q...\E`: the text between, taken literally (to the end when `\E` is missing).
    private mutating func parseQuotedText() -> String {
        position += 2
        var text = ""
        while let character = peek, !(character == "\\" && peek(1) == "E") {
            text.append(character)
            position += 1
        }
        if peek != nil { position += 2 }
        return text
    }

    /// Joins adjacent literals, so `e\u{301}` is the single character `é` and `\r\n` is CR-LF, as
    /// in Swift's `Regex`.
    private static func join(_ pieces: [Piece]) -> PatternNode {
        var nodes: [PatternNode] = []
        var text = ""
        var textCaseInsensitive = false
        func flush() {
            for character in text {
                nodes.append(.atom(.literal(character, caseInsensitive: textCaseInsensitive)))
            }
            text = ""
        }
        for piece in pieces {
            switch piece {
            case .literal(let literal, let caseInsensitive):
                if caseInsensitive != textCaseInsensitive { flush() }
                textCaseInsensitive = caseInsensitive
                text += literal
            case .node(let node):
                flush()
                nodes.append(node)
            case .boundary:
                flush()
            }
        }
        flush()
        switch nodes.count {
        case 0: return .empty
        case 1: return nodes[0]
        default: return .sequence(nodes)
        }
    }

    /// A group, a flag change such as `(?i)` (which changes `flags`), or a comment `(?#...)`.
    private mutating func parseGroup(_ flags: inout Flags) throws(PatternError) -> Group {
        let open = position
        position += 1
        if peek == "*" {
            throw needsBacktracking("backtracking verbs '(*'", at: open)
        }
        var inner = flags
        if peek == "?" {
            position += 1
            guard let kind = peek else {
                throw PatternError("incomplete group '(?' at the end of the pattern", at: open)
            }
            switch kind {
            case ":":
                position += 1
            case "#":
                while let character = peek, character != ")" { position += 1 }
                guard peek == ")" else {
                    throw PatternError("missing ')' to close the comment", at: open)
                }
                position += 1
                return .comment
            case "=", "!", "*":
                throw needsBacktracking("lookahead '\(text(from: open, to: position + 1))'", at: open)
            case "<" where peek(1) == "=" || peek(1) == "!" || peek(1) == "*":
                throw needsBacktracking("lookbehind '\(text(from: open, to: position + 2))'", at: open)
            case "<", "'":
                position += 1
                try parseGroupName(closing: kind == "<" ? ">" : "'", open: open)
            case "P" where peek(1) == "<":
                position += 2
                try parseGroupName(closing: ">", open: open)
            case "P" where peek(1) == "=":
                throw backreference(text(from: open, to: closing(")", from: position) ?? characters.count), at: open)
            case "P" where peek(1) == ">":
                throw needsBacktracking("recursion '\(text(from: open, to: position + 2))'", at: open)
            case ">":
                throw needsBacktracking("atomic groups '(?>'", at: open)
            case "(":
                throw needsBacktracking("conditionals '(?('", at: open)
            case "|":
                throw unsupported("branch reset groups '(?|'; write '(?:' instead", at: open)
            case "R", "&", "+", "0"..."9":
                throw needsBacktracking("recursion '\(text(from: open, to: position + 1))'", at: open)
            case "-" where peek(1).map { ("0"..."9").contains($0) } == true:
                throw needsBacktracking("recursion '\(text(from: open, to: position + 2))'", at: open)
            case "C":
                throw needsBacktracking("callouts '(?C'", at: open)
            default:
                var changed = flags
                if peek == "^" {
                    position += 1
                    changed = Flags()
                }
                var adding = true
                scan: while let flag = peek {
                    switch flag {
                    case "i": changed.caseInsensitive = adding
                    case "m": changed.multiline = adding
                    case "s": changed.dotMatchesNewlines = adding
                    case "x": changed.extended = adding
                    // No captures (n) and lazy-by-default (U) change nothing for a yes-or-no match.
                    case "n", "U": break
                    case "-" where adding: adding = false
                    case ")", ":": break scan
                    default:
                        if flag.isLetter {
                            throw unsupported("the flag '\(flag)' (the flags are i, m, s, x, n and U)", at: position)
                        }
                        throw PatternError("unknown group syntax '\(text(from: open, to: position + 1))'", at: open)
                    }
                    position += 1
                }
                guard let end = peek else {
                    throw PatternError("missing ')' to close the group", at: open)
                }
                position += 1
                if end == ")" {
                    flags = changed
                    return .flagChange
                }
                inner = changed
            }
        }
        depth += 1
        defer { depth -= 1 }
        if depth > Self.depthLimit {
            throw PatternError("groups nest more than \(Self.depthLimit) deep", at: open)
        }
        let body = try parseAlternation(&inner)
        guard peek == ")" else {
            throw PatternError("missing ')' to close the group", at: open)
        }
        position += 1
        return .group(body)
    }

    /// Reads a capture name (captures are not kept: only whether the pattern matches counts).
    private mutating func parseGroupName(closing: Character, open: Int) throws(PatternError) {
        let start = position
        while let character = peek, character != closing {
            if character == "-" {
                throw needsBacktracking("balancing groups '\(text(from: open, to: position + 1))'", at: open)
            }
            guard character.isLetter || character.isNumber || character == "_" else {
                throw PatternError("invalid group name: '\(character)' is not a letter, digit or '_'", at: position)
            }
            position += 1
        }
        guard peek == closing else {
            throw PatternError("missing '\(closing)' to end the group name", at: start)
        }
        guard position > start else {
            throw PatternError("empty group name", at: start)
        }
        guard !characters[start].isNumber else {
            throw PatternError("a group name cannot start with a digit", at: start)
        }
        position += 1
    }

    // MARK: Character classes

    private mutating func parseClass(_ flags: Flags) throws(PatternError) -> CharacterClass {
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
    private func firstAfterDash(_ flags: Flags) -> Character? {
        var copy = self
        copy.position += 1
        if flags.extended { copy.skipTrivia() }
        return copy.peek
    }

    private mutating func parseClassMember(_ flags: Flags) throws(PatternError) -> CharacterClass.Member {
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

    // MARK: Escapes

    private enum Escape {
        case scalar(Unicode.Scalar)
        case builtin(BuiltinClass, inverted: Bool)
        case assertion(PatternAssertion)
    }

    private mutating func parseEscape() throws(PatternError) -> Escape {
        let start = position
        position += 1
        guard let letter = peek else {
            throw PatternError("the pattern ends with a lone '\\'", at: start)
        }
        position += 1
        switch letter {
        case "d": return .builtin(.digit, inverted: false)
        case "D": return .builtin(.digit, inverted: true)
        case "w": return .builtin(.word, inverted: false)
        case "W": return .builtin(.word, inverted: true)
        case "s": return .builtin(.whitespace, inverted: false)
        case "S": return .builtin(.whitespace, inverted: true)
        case "h": return .builtin(.horizontalWhitespace, inverted: false)
        case "H": return .builtin(.horizontalWhitespace, inverted: true)
        case "v": return .builtin(.verticalWhitespace, inverted: false)
        case "V": return .builtin(.verticalWhitespace, inverted: true)
        case "b": return .assertion(.wordBoundary)
        case "B": return .assertion(.notWordBoundary)
        case "A": return .assertion(.startOfSubject)
        case "z": return .assertion(.endOfSubject)
        case "Z": return .assertion(.endOfSubjectBeforeNewline)
        case "t": return .scalar("\t")
        case "n": return .scalar("\n")
        case "r": return .scalar("\r")
        case "f": return .scalar("\u{C}")
        case "e": return .scalar("\u{1B}")
        case "a": return .scalar("\u{7}")
        case "0":
            var value: UInt32 = 0
            var digits = 0
            while digits < 3, let digit = peek?.asciiHexDigitValue, digit < 8 {
                value = value * 8 + UInt32(digit)
                digits += 1
                position += 1
            }
            return .scalar(Unicode.Scalar(value)!)
        case "x":
            if peek == "{" { return .scalar(try parseBracedScalar(escapeStart: start)) }
            return .scalar(try parseHexScalar(minDigits: 1, maxDigits: 2, escapeStart: start))
        case "u":
            if peek == "{" { return .scalar(try parseBracedScalar(escapeStart: start)) }
            return .scalar(try parseHexScalar(minDigits: 4, maxDigits: 4, escapeStart: start))
        case "1"..."9":
            while let digit = peek, ("0"..."9").contains(digit) { position += 1 }
            throw backreference(text(from: start, to: position), at: start)
        case "k", "g":
            let end: Int
            switch peek {
            case "<": end = closing(">", from: position) ?? position
            case "{": end = closing("}", from: position) ?? position
            case "'": end = closing("'", from: position + 1) ?? position
            default: end = position
            }
            throw backreference(text(from: start, to: end), at: start)
        case "p", "P":
            throw unsupported("Unicode property classes '\\\(letter){...}'; use \\w, \\d, \\s or a range", at: start)
        case "X", "R", "N", "G", "K", "y", "Y", "O", "C", "E", "c", "o", "U", "L", "l":
            throw unsupported("the escape '\\\(letter)'", at: start)
        default:
            if letter.isASCII && !letter.isLetter && !letter.isNumber, let scalar = letter.unicodeScalars.first {
                return .scalar(scalar)
            }
            throw PatternError("unknown escape '\\\(letter)'", at: start)
        }
    }

    /// `\x{...}` or `\u{...}`, the brace at `position`.
    private mutating func parseBracedScalar(escapeStart: Int) throws(PatternError) -> Unicode.Scalar {
        position += 1
        var value: UInt32 = 0
        var digits = 0
        while let digit = peek?.asciiHexDigitValue {
            value = digits < 8 ? value * 16 + UInt32(digit) : UInt32.max
            digits += 1
            position += 1
        }
        guard digits > 0, peek == "}" else {
            throw PatternError("expected hexadecimal digits and '}' in '\(text(from: escapeStart, to: position + 1))'", at: escapeStart)
        }
        position += 1
        return try scalar(value, escapeStart: escapeStart)
    }

    private mutating func parseHexScalar(minDigits: Int, maxDigits: Int, escapeStart: Int) throws(PatternError) -> Unicode.Scalar {
        var value: UInt32 = 0
        var digits = 0
        while digits < maxDigits, let digit = peek?.asciiHexDigitValue {
            value = value * 16 + UInt32(digit)
            digits += 1
            position += 1
        }
        guard digits >= minDigits else {
            throw PatternError("expected \(minDigits == maxDigits ? "\(minDigits)" : "1 or 2") hexadecimal digits after '\(text(from: escapeStart, to: escapeStart + 2))'", at: escapeStart)
        }
        return try scalar(value, escapeStart: escapeStart)
    }

    private func scalar(_ value: UInt32, escapeStart: Int) throws(PatternError) -> Unicode.Scalar {
        guard let scalar = Unicode.Scalar(value) else {
            throw PatternError("'\(text(from: escapeStart, to: position))' is not a Unicode scalar value", at: escapeStart)
        }
        return scalar
    }

    // MARK: Quantifiers

    private struct Quantifier {
        let min: Int
        let max: Int?
        let start: Int
    }

    /// The quantifier at `position`, if any, with its lazy `?`; a possessive `+` is refused.
    private mutating func parseQuantifier(_ flags: Flags) throws(PatternError) -> Quantifier? {
        if flags.extended { skipTrivia() }
        let start = position
        let min: Int
        let max: Int?
        switch peek {
        case "*": (min, max) = (0, nil); position += 1
        case "+": (min, max) = (1, nil); position += 1
        case "?": (min, max) = (0, 1); position += 1
        case "{":
            guard let braces = quantifierBraces(at: position) else { return nil }
            (min, max) = (braces.min, braces.max)
            position = braces.end
            if let max, min > max {
                throw PatternError("invalid quantifier '\(text(from: start, to: position))': the minimum is larger than the maximum", at: start)
            }
            if min > Self.repetitionLimit || (max ?? 0) > Self.repetitionLimit {
                throw PatternError("quantifier '\(text(from: start, to: position))' repeats more than \(Self.repetitionLimit) times", at: start)
            }
        default:
            return nil
        }
        if flags.extended { skipTrivia() }
        if peek == "?" {
            position += 1
        } else if peek == "+" {
            throw needsBacktracking("possessive quantifiers '\(text(from: start, to: position + 1))'", at: start)
        }
        return Quantifier(min: min, max: max, start: start)
    }

    /// The end of the quantifier starting at `position`, without reading it.
    private func peekQuantifier() -> Int? {
        switch peek {
        case "*", "+", "?": return position + 1
        case "{": return quantifierBraces(at: position)?.end
        default: return nil
        }
    }

    /// `{n}`, `{n,}`, `{n,m}` or `{,m}` at `index`, spaces allowed inside as Swift does; nil when
    /// the brace is a literal `{`.
    private func quantifierBraces(at index: Int) -> (min: Int, max: Int?, end: Int)? {
        var index = index + 1
        func skip() {
            while index < characters.count, characters[index].isPatternWhitespace { index += 1 }
        }
        func number() -> Int? {
            var value: Int?
            while index < characters.count, let digit = characters[index].wholeNumberValue, characters[index].isASCII {
                value = Swift.min((value ?? 0) * 10 + digit, Self.repetitionLimit + 1)
                index += 1
            }
            return value
        }
        skip()
        let low = number()
        skip()
        var high = low
        var hasComma = false
        if index < characters.count, characters[index] == "," {
            hasComma = true
            index += 1
            skip()
            high = number()
            skip()
        }
        guard index < characters.count, characters[index] == "}", low != nil || high != nil else { return nil }
        return (low ?? 0, hasComma ? high : low, index + 1)
    }

    // MARK: Reading

    private var peek: Character? {
        position < characters.count ? characters[position] : nil
    }

    private func peek(_ ahead: Int) -> Character? {
        position + ahead < characters.count ? characters[position + ahead] : nil
    }

    /// The source between two offsets (clamped to its end).
    private func text(from start: Int, to end: Int) -> String {
        String(characters[start..<Swift.min(Swift.max(end, start), characters.count)])
    }

    /// The offset just past the first `delimiter` at or after `index`.
    private func closing(_ delimiter: Character, from index: Int) -> Int? {
        characters[Swift.min(index, characters.count)...].firstIndex(of: delimiter).map { $0 + 1 }
    }

    /// Skips whitespace and `#` comments, under the `x` flag (in character classes too, as Swift).
    private mutating func skipTrivia() {
        while let character = peek {
            if character.isPatternWhitespace {
                position += 1
            } else if character == "#" {
                while let inComment = peek, !inComment.isNewline { position += 1 }
            } else {
                return
            }
        }
    }

    private func unsupported(_ what: String, at offset: Int) -> PatternError {
        PatternError("unsupported: \(what)", at: offset)
    }

    private func needsBacktracking(_ construct: String, at offset: Int) -> PatternError {
        PatternError("unsupported: \(construct) (needs backtracking; Mishap matches in linear time)", at: offset)
    }

    private func backreference(_ text: String, at offset: Int) -> PatternError {
        PatternError("unsupported: backreferences (\(text)) can make matching take exponential time", at: offset)
    }
}

extension Character {
    /// Whitespace that the `x` flag ignores (Unicode's Pattern_White_Space).
    fileprivate var isPatternWhitespace: Bool {
        unicodeScalars.first!.properties.isPatternWhitespace
    }

    /// The value of `0-9`, `a-f` or `A-F`; nil for anything else (full-width digits included).
    fileprivate var asciiHexDigitValue: Int? {
        isASCII ? hexDigitValue : nil
    }
}
