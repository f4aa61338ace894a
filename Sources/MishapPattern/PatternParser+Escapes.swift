// Parsing backslash escapes.
extension PatternParser {
    // MARK: Escapes

    enum Escape {
        case scalar(Unicode.Scalar)
        case builtin(BuiltinClass, inverted: Bool)
        case assertion(PatternAssertion)
    }

    mutating func parseEscape() throws(PatternError) -> Escape {
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
    mutating func parseBracedScalar(escapeStart: Int) throws(PatternError) -> Unicode.Scalar {
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

    mutating func parseHexScalar(minDigits: Int, maxDigits: Int, escapeStart: Int) throws(PatternError) -> Unicode.Scalar {
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

    func scalar(_ value: UInt32, escapeStart: Int) throws(PatternError) -> Unicode.Scalar {
        guard let scalar = Unicode.Scalar(value) else {
            throw PatternError("'\(text(from: escapeStart, to: position))' is not a Unicode scalar value", at: escapeStart)
        }
        return scalar
    }
}
