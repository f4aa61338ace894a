extension JSONValue {
    /// Whether two values are the same JSON (`enum`, `const`): numbers by value (`1` is `1.0`),
    /// objects whatever their members' order.
    public func isSameJSON(as other: JSONValue) -> Bool {
        switch (self, other) {
        case (.string(let a), .string(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b || (Double(a) != nil && Double(a) == Double(b))
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null): return true
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isSameJSON(as: $1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count && a.allSatisfy { member in
                b.contains { $0.0 == member.0 && $0.1.isSameJSON(as: member.1) }
            }
        default: return false
        }
    }

    /// The value as a problem names it: strings quoted and numbers as written, both cut at 60
    /// characters; objects and arrays by their kind.
    var shownForProblem: String {
        switch self {
        case .string(let text):
            let cut = text.unicodeScalars.count > 60 ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(60))) + "…" : text
            var out: [UInt8] = []
            JSONValue.string(cut).write(into: &out)
            return String(decoding: out, as: UTF8.self)
        case .number(let text): return text.count > 60 ? String(text.prefix(60)) + "…" : text
        case .bool(let value): return value ? "true" : "false"
        case .null: return "null"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
