// Parsing quantifiers: `*`, `+`, `?`, `{n,m}` and their lazy and possessive forms.
extension PatternParser {
    // MARK: Quantifiers

    struct Quantifier {
        let min: Int
        let max: Int?
        let start: Int
    }

    /// The quantifier at `position`, if any, with its lazy `?`; a possessive `+` is refused.
    mutating func parseQuantifier(_ flags: Flags) throws(PatternError) -> Quantifier? {
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
    func peekQuantifier() -> Int? {
        switch peek {
        case "*", "+", "?": return position + 1
        case "{": return quantifierBraces(at: position)?.end
        default: return nil
        }
    }

    /// `{n}`, `{n,}`, `{n,m}` or `{,m}` at `index`, spaces allowed inside as Swift does; nil when
    /// the brace is a literal `{`.
    func quantifierBraces(at index: Int) -> (min: Int, max: Int?, end: Int)? {
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
}
