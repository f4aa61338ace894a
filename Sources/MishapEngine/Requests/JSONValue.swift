import MishapSupport

/// A parsed JSON document, just enough to read fields of request bodies (and the admin API's
/// answers, for the commands that print them).
public enum JSONValue: Sendable {
    case string(String)
    /// A number, kept as written.
    case number(String)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// The value at a dotted path (`user.email`, `items.0`), or nil when any step is missing.
    func value(at path: ArraySlice<String>) -> JSONValue? {
        guard let key = path.first else { return self }
        switch self {
        case .object(let members):
            guard let member = members.first(where: { $0.0 == key }) else { return nil }
            return member.1.value(at: path.dropFirst())
        case .array(let items):
            guard let index = Int(key), items.indices.contains(index) else { return nil }
            return items[index].value(at: path.dropFirst())
        default:
            return nil
        }
    }

    /// The value as conditions and placeholders see it: strings unquoted, `null` as absent,
    /// numbers and booleans as written, objects and arrays as compact JSON.
    var text: String? {
        switch self {
        case .string(let s): return s
        case .null: return nil
        case .number, .bool, .array, .object:
            var out: [UInt8] = []
            write(into: &out)
            return String(decoding: out, as: UTF8.self)
        }
    }

    func write(into out: inout [UInt8]) {
        switch self {
        case .string(let s):
            out.append(UInt8(ascii: "\""))
            JSONEscaping.appendEscaped(s, to: &out)
            out.append(UInt8(ascii: "\""))
        case .number(let n): out.append(contentsOf: n.utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .null: out.append(contentsOf: "null".utf8)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.string(key).write(into: &out)
                out.append(UInt8(ascii: ":"))
                value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Parses a complete JSON text (RFC 8259); nil when it is not valid JSON.
    public static func parse(_ bytes: [UInt8]) -> JSONValue? {
        var parser = JSONParser(bytes: bytes)
        return parser.parseDocument()
    }
}
