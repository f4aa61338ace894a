import MishapScenarios

/// An answer body made from a schema when the description gives no example: the schema's own
/// `example`, `examples`, `default`, `const` or first `enum` value where it has one, otherwise a
/// plausible value of its type and format, every property filled in (required or not), one item
/// per array. A schema that contains itself (a tree of nodes) stops where it would repeat: an
/// optional property is left out there, a required one is `null`.
struct ExampleGenerator {
    let resolver: ReferenceResolver
    /// Keywords met that the generator does not read (`not`, `if`...), for the summary.
    private(set) var unsupported: Set<String> = []

    static let unreadKeywords = ["not", "if", "then", "else", "patternProperties", "dependentSchemas", "prefixItems", "contains"]

    init(resolver: ReferenceResolver) {
        self.resolver = resolver
    }

    /// A value for `schema`.
    mutating func value(for schema: JSONTree) throws(ReferenceResolver.Problem) -> JSONTree {
        try value(for: schema, expanding: [], depth: 0) ?? .null
    }

    /// nil where the schema repeats itself (`expanding` holds the references being expanded).
    private mutating func value(for schema: JSONTree, expanding: [String], depth: Int) throws(ReferenceResolver.Problem) -> JSONTree? {
        guard depth < 24 else { return nil }
        var expanding = expanding
        var schema = schema
        if let reference = schema["$ref"]?.string {
            if expanding.contains(reference) { return nil }
            expanding.append(reference)
            schema = try resolver.resolve(schema).value
        }
        guard let object = schema.object else { return .null }
        for keyword in Self.unreadKeywords where object[keyword] != nil { unsupported.insert(keyword) }
        if let example = object["example"] { return example }
        if case .array(let examples)? = object["examples"], let first = examples.first { return first }
        if let value = object["const"] ?? object["default"] { return value }
        if case .array(let values)? = object["enum"], let first = values.first(where: { $0 != .null }) { return first }
        if case .array(let parts)? = object["allOf"] {
            var merged = JSONTree.Object()
            var other: JSONTree?
            for part in parts {
                guard let value = try value(for: part, expanding: expanding, depth: depth + 1) else { continue }
                if let members = value.object {
                    for member in members.members where merged[member.key] == nil { merged[member.key] = member.value }
                } else if other == nil {
                    other = value
                }
            }
            var own = object
            own["allOf"] = nil
            if own["properties"] != nil, let value = try value(for: .object(own), expanding: expanding, depth: depth + 1)?.object {
                for member in value.members where merged[member.key] == nil { merged[member.key] = member.value }
            }
            return merged.isEmpty ? (other ?? .object(merged)) : .object(merged)
        }
        for key in ["oneOf", "anyOf"] {
            guard case .array(let branches)? = object[key] else { continue }
            for branch in branches where branch["type"]?.string != "null" {
                if let value = try value(for: branch, expanding: expanding, depth: depth + 1) { return value }
            }
            return .null
        }
        let shape = try SchemaShape.of(schema, resolver)
        switch shape.types.first {
        case "object"?:
            var members = JSONTree.Object()
            for property in shape.properties {
                if let value = try value(for: property.schema, expanding: expanding, depth: depth + 1) {
                    members[property.name] = value
                } else if shape.required.contains(property.name) {
                    members[property.name] = .null
                }
            }
            return .object(members)
        case "array"?:
            guard let items = shape.items, let item = try value(for: items, expanding: expanding, depth: depth + 1) else { return .array([]) }
            let count = max(1, min(3, Int(object["minItems"].flatMap(\.numberText).flatMap { Int($0) } ?? 1)))
            return .array(Array(repeating: item, count: count))
        case "string"?: return .string(Self.string(format: shape.format))
        case "integer"?: return .number(object["minimum"]?.numberText.flatMap { Int($0) }.map(String.init) ?? "1")
        case "number"?: return .number(object["minimum"]?.numberText ?? "1.5")
        case "boolean"?: return .bool(true)
        case "null"?: return .null
        default: return .object(JSONTree.Object())
        }
    }

    /// A string of the format: a date-time, a date, a UUID, an email address, a URI...
    static func string(format: String?) -> String {
        switch format {
        case "date-time": return "2026-01-02T03:04:05Z"
        case "date": return "2026-01-02"
        case "time": return "03:04:05Z"
        case "uuid": return "3fa85f64-5717-4562-b3fc-2c963f66afa6"
        case "email": return "someone@example.com"
        case "uri", "url": return "https://example.com/"
        case "hostname": return "example.com"
        case "ipv4": return "192.0.2.1"
        case "ipv6": return "2001:db8::1"
        case "byte": return "bWlzaGFw"
        default: return "string"
        }
    }
}

extension JSONTree {
    /// The text of a number.
    var numberText: String? {
        if case .number(let text) = self { return text }
        return nil
    }
}
