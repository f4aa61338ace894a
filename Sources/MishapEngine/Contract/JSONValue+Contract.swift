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

    /// The value as a problem names it: as compact JSON, strings and numbers cut at 60
    /// characters, objects and arrays of more than 60 characters by their kind and size.
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
        case .array(let items):
            return Self.compact(self) ?? "an array of \(items.count) item(s)"
        case .object(let members):
            return Self.compact(self) ?? "an object of \(members.count) member(s)"
        }
    }

    /// `value` as compact JSON when it takes 60 bytes or fewer.
    private static func compact(_ value: JSONValue) -> String? {
        var out: [UInt8] = []
        value.write(into: &out)
        return out.count <= 60 ? String(decoding: out, as: UTF8.self) : nil
    }
}
