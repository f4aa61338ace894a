/// One-line descriptions of what a rule answers, for `mishap routes` and listings:
/// `query.userName = servererror`, `body.email prefix "locked@"`, `chance 0.5`.
extension Condition {
    /// The condition in brief, as it reads after the value's name.
    public var summary: String {
        switch self {
        case .equals(let value): return "= \(Self.quoted(value))"
        case .oneOf(let values): return "in [\(values.sorted().map(Self.quoted).joined(separator: ", "))]"
        case .absent: return "absent"
        case .present: return "present"
        case .empty: return "empty"
        case .length(let min?, let max?) where min == max: return "length \(min)"
        case .length(let min, let max):
            return [min.map { "length >= \($0)" }, max.map { "length <= \($0)" }].compactMap { $0 }.joined(separator: ", ")
        case .matches(let pattern): return "matches \(Self.quoted(pattern.source))"
        case .prefix(let prefix): return "prefix \(Self.quoted(prefix))"
        case .suffix(let suffix): return "suffix \(Self.quoted(suffix))"
        case .contains(let part): return "contains \(Self.quoted(part))"
        case .equalsText(let template): return "= \(Self.quoted(template.text))"
        case .number(let min?, let max?) where min == max: return "= \(min)"
        case .number(let min, let max):
            return [min.map { ">= \($0)" }, max.map { "<= \($0)" }].compactMap { $0 }.joined(separator: ", ")
        case .not(let inner): return "not (\(inner.summary))"
        case .all(let inner): return inner.map(\.summary).joined(separator: ", ")
        }
    }

    /// A value as written: bare when it is a plain word, else in double quotes.
    static func quoted(_ value: String) -> String {
        isPlain(value) ? value : "\"\(value)\""
    }

    /// Whether `value` reads unquoted: letters, digits and `@._-!` only. ASCII text is decided
    /// byte by byte (an ASCII letter or digit is exactly an alphabetic or numeric ASCII
    /// scalar): looking up each scalar's Unicode properties cost 400,000 instructions of
    /// loading the default scenarios.
    static func isPlain(_ value: String) -> Bool {
        if value.isEmpty { return false }
        var value = value
        // An ASCII character outside the set quotes the value whatever else it holds; a byte
        // beyond ASCII leaves the answer to the scalars' properties.
        if let plain = value.withUTF8({ bytes -> Bool? in
            for byte in bytes {
                guard byte < 0x80 else { return nil }
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                     UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "@"), UInt8(ascii: "."),
                     UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "!"):
                    continue
                default:
                    return false
                }
            }
            return true
        }) {
            return plain
        }
        return value.unicodeScalars.allSatisfy {
            ($0.properties.isAlphabetic || $0.properties.numericType != nil || "@._-!".unicodeScalars.contains($0)) && $0 != " "
        }
    }
}

extension Template {
    /// The template as written: its text with `{{placeholders}}`.
    public var text: String {
        segments.map { segment in
            switch segment {
            case .literal(let bytes): return String(decoding: bytes, as: UTF8.self)
            case .value(let source): return "{{\(source)}}"
            }
        }.joined()
    }
}

extension Predicate {
    /// The tests in brief, joined by `and`; `(always)` for none.
    ///
    /// Written into one string as it goes: a list of parts joined at the end went through the
    /// unspecialized `joined(separator:)`, 2,600 instructions a predicate, and loading checks
    /// every rule's `when` this way (`RuleReachability`).
    public var summary: String {
        var text = ""
        for (source, condition) in conditions {
            if !text.isEmpty { text += " and " }
            text += source.description
            text += " "
            text += condition.summary
        }
        if let malformedBody {
            if !text.isEmpty { text += " and " }
            text += malformedBody ? "malformed body" : "well-formed body"
        }
        return text.isEmpty ? "(always)" : text
    }
}

extension Rule {
    /// When the rule answers, in brief and on one line: its `when` (alternatives joined by
    /// `or`) and its `chance`, cut at `limit` characters.
    public func triggerSummary(limit: Int = 60) -> String {
        var parts: [String] = []
        let conditions = when.map(\.summary).joined(separator: " or ")
        if conditions != "(always)" || chance == nil { parts.append(conditions) }
        if let chance { parts.append("chance \(chance)") }
        let text = parts.joined(separator: ", ")
        guard text.count > limit else { return text }
        return String(text.prefix(limit - 1)) + "…"
    }
}
