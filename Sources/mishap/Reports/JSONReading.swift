import MishapEngine

/// A JSON document the admin API answered, read just enough for the commands that print it
/// (`verdict`, `sweep`), read by the engine's JSON reader (the binary links no Foundation).
enum JSONReading: Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONReading])
    case object([(String, JSONReading)])

    static func == (lhs: JSONReading, rhs: JSONReading) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The member `key` of an object; nil for anything else or a missing key.
    subscript(key: String) -> JSONReading? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    var array: [JSONReading]? {
        if case .array(let items) = self { return items }
        return nil
    }

    var members: [(String, JSONReading)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    var isNull: Bool { self == .null }

    /// Parses a complete JSON text (RFC 8259) with the engine's reader; nil when it is not one.
    static func parse(_ text: String) -> JSONReading? {
        JSONValue.parse(Array(text.utf8)).flatMap(JSONReading.init)
    }

    /// The engine's value, its numbers as `Double`; nil for a number `Double` cannot hold.
    private init?(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .string(let text): self = .string(text)
        case .number(let text):
            guard let number = Double(text) else { return nil }
            self = .number(number)
        case .array(let items):
            var read: [JSONReading] = []
            for item in items {
                guard let one = JSONReading(item) else { return nil }
                read.append(one)
            }
            self = .array(read)
        case .object(let members):
            var read: [(String, JSONReading)] = []
            for (key, member) in members {
                guard let one = JSONReading(member) else { return nil }
                read.append((key, one))
            }
            self = .object(read)
        }
    }
}
