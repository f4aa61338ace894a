import MishapSupport

/// A JSON value, written compactly with its keys in the order given (admin answers, logs).
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    public static func == (lhs: JSON, rhs: JSON) -> Bool { lhs.text == rhs.text }

    /// A string, or null.
    static func optional(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }
    /// A number, or null.
    static func optional(_ value: Int?) -> JSON { value.map(JSON.int) ?? .null }

    /// The compact JSON text.
    public var text: String {
        var out = ""
        write(into: &out)
        return out
    }

    func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .double(let value): out += value.isFinite ? String(value) : "null"
        case .string(let value): out += JSONEscaping.quoted(value)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                out += JSONEscaping.quoted(key)
                out += ":"
                value.write(into: &out)
            }
            out += "}"
        }
    }
}
