/// Reads an expression into a ``PatternNode``, refusing what cannot be matched in linear time.
///
/// The source is read by characters, as Swift's `Regex` parser does, and errors give the offset in
/// characters.
struct PatternParser {
    /// The most repetitions one quantifier may ask for.
    static let repetitionLimit = 10_000
    /// The deepest nesting of groups.
    static let depthLimit = 200

    struct Flags {
        var caseInsensitive = false
        var dotMatchesNewlines = false
        var multiline = false
        var extended = false
    }

    /// A sequence element before adjacent literals are joined into characters.
    enum Piece {
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

    enum Group {
        case group(PatternNode)
        case flagChange
        case comment
    }

    let characters: [Character]
    var position = 0
    var depth = 0

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
    mutating func parseAlternation(_ flags: inout Flags) throws(PatternError) -> PatternNode {
        var alternatives = [try parseSequence(&flags)]
        while peek == "|" {
            position += 1
            alternatives.append(try parseSequence(&flags))
        }
        return alternatives.count == 1 ? alternatives[0] : .alternation(alternatives)
    }

    mutating func parseSequence(_ flags: inout Flags) throws(PatternError) -> PatternNode {
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
    mutating func parseQuotedText() -> String {
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
    static func join(_ pieces: [Piece]) -> PatternNode {
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
    mutating func parseGroup(_ flags: inout Flags) throws(PatternError) -> Group {
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
    mutating func parseGroupName(closing: Character, open: Int) throws(PatternError) {
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

    // MARK: Reading

    var peek: Character? {
        position < characters.count ? characters[position] : nil
    }

    func peek(_ ahead: Int) -> Character? {
        position + ahead < characters.count ? characters[position + ahead] : nil
    }

    /// The source between two offsets (clamped to its end).
    func text(from start: Int, to end: Int) -> String {
        String(characters[start..<Swift.min(Swift.max(end, start), characters.count)])
    }

    /// The offset just past the first `delimiter` at or after `index`.
    func closing(_ delimiter: Character, from index: Int) -> Int? {
        characters[Swift.min(index, characters.count)...].firstIndex(of: delimiter).map { $0 + 1 }
    }

    /// Skips whitespace and `#` comments, under the `x` flag (in character classes too, as Swift).
    mutating func skipTrivia() {
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

    func unsupported(_ what: String, at offset: Int) -> PatternError {
        PatternError("unsupported: \(what)", at: offset)
    }

    func needsBacktracking(_ construct: String, at offset: Int) -> PatternError {
        PatternError("unsupported: \(construct) (needs backtracking; Mishap matches in linear time)", at: offset)
    }

    func backreference(_ text: String, at offset: Int) -> PatternError {
        PatternError("unsupported: backreferences (\(text)) can make matching take exponential time", at: offset)
    }
}

extension Character {
    /// Whitespace that the `x` flag ignores (Unicode's Pattern_White_Space).
    var isPatternWhitespace: Bool {
        unicodeScalars.first!.properties.isPatternWhitespace
    }

    /// The value of `0-9`, `a-f` or `A-F`; nil for anything else (full-width digits included).
    var asciiHexDigitValue: Int? {
        isASCII ? hexDigitValue : nil
    }
}
