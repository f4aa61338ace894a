import MishapSupport

/// A JSON value with its objects' members in the order they were written: what a YAML or JSON
/// document reads as (`YAMLDocumentReader`), for readers outside the scenario loader (the
/// OpenAPI importer) that must keep a description's order (its properties, its paths) and that
/// Foundation's JSON reader would shuffle. Numbers keep their text.
public indirect enum JSONTree: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONTree])
    case object(Object)

    /// An object's members in order, with a table for looking a key up (the first of a key wins).
    public struct Object: Sendable, Equatable {
        public private(set) var members: [(key: String, value: JSONTree)] = []
        private var index: [String: Int] = [:]

        public init() {}

        public init(_ members: [(key: String, value: JSONTree)]) {
            for member in members { self[member.key] = member.value }
        }

        /// The value of `key`; setting a key already there replaces its value in place, setting
        /// nil removes it.
        public subscript(key: String) -> JSONTree? {
            get { index[key].map { members[$0].value } }
            set {
                if let position = index[key] {
                    if let newValue {
                        members[position].value = newValue
                    } else {
                        members.remove(at: position)
                        index = [:]
                        for (offset, member) in members.enumerated() where index[member.key] == nil { index[member.key] = offset }
                    }
                } else if let newValue {
                    index[key] = members.count
                    members.append((key, newValue))
                }
            }
        }

        /// The keys in order.
        public var keys: [String] { members.map(\.key) }
        /// Whether the object has no member.
        public var isEmpty: Bool { members.isEmpty }

        public static func == (left: Object, right: Object) -> Bool {
            left.members.count == right.members.count
                && zip(left.members, right.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        }
    }

    /// The object, when the value is one.
    public var object: Object? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The string, when the value is one.
    public var string: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The list, when the value is one.
    public var array: [JSONTree]? {
        if case .array(let array) = self { return array }
        return nil
    }

    /// The member `key` of an object; nil for anything else.
    public subscript(key: String) -> JSONTree? { object?[key] }

    /// Compact JSON text, members in order.
    public var jsonText: String {
        var out: [UInt8] = []
        append(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the compact JSON text of the value to `out`.
    private func append(to out: inout [UInt8]) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let value): out += Array((value ? "true" : "false").utf8)
        case .number(let text): out += Array(text.utf8)
        case .string(let text):
            out.append(UInt8(ascii: "\""))
            JSONEscaping.appendEscaped(text, to: &out)
            out.append(UInt8(ascii: "\""))
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (offset, item) in items.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                item.append(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (offset, member) in object.members.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "\""))
                JSONEscaping.appendEscaped(member.key, to: &out)
                out += [UInt8(ascii: "\""), UInt8(ascii: ":")]
                member.value.append(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
