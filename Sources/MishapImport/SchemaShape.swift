import MishapScenarios

/// What the importer needs to know of a schema, with its `$ref`s followed and `allOf` merged:
/// its type, whether `null` is allowed (3.0's `nullable: true`, 3.1's `null` in `type` or in a
/// `oneOf`/`anyOf`), an object's properties and required names, an array's items.
struct SchemaShape {
    var types: [String] = []
    var nullable = false
    var properties: [(name: String, schema: JSONTree)] = []
    var required: Set<String> = []
    var items: JSONTree?
    var enumValues: [JSONTree] = []
    var format: String?

    /// The shape of `schema`. `oneOf` and `anyOf` take their first branch that is not `null`.
    static func of(_ schema: JSONTree, _ resolver: ReferenceResolver, depth: Int = 0) throws(ReferenceResolver.Problem) -> SchemaShape {
        var shape = SchemaShape()
        guard depth < 32 else { return shape }
        let resolved = try resolver.resolve(schema).value
        guard let object = resolved.object else { return shape }
        switch object["type"] {
        case .string(let type)?: shape.types = [type]
        case .array(let types)?: shape.types = types.compactMap(\.string)
        default: break
        }
        if shape.types.contains("null") || object["nullable"] == .bool(true) { shape.nullable = true }
        shape.types.removeAll { $0 == "null" }
        if case .array(let values)? = object["enum"] {
            shape.enumValues = values.filter { $0 != .null }
            if values.contains(.null) { shape.nullable = true }
        }
        shape.format = object["format"]?.string
        if let properties = object["properties"]?.object {
            shape.properties = properties.members.map { ($0.key, $0.value) }
        }
        if case .array(let names)? = object["required"] { shape.required = Set(names.compactMap(\.string)) }
        shape.items = object["items"]
        if case .array(let parts)? = object["allOf"] {
            for part in parts { try shape.merge(of(part, resolver, depth: depth + 1)) }
        }
        for key in ["oneOf", "anyOf"] {
            guard case .array(let branches)? = object[key] else { continue }
            if branches.contains(where: { $0["type"]?.string == "null" }) { shape.nullable = true }
            if let first = branches.first(where: { $0["type"]?.string != "null" }) {
                try shape.merge(of(first, resolver, depth: depth + 1))
            }
        }
        if shape.types.isEmpty {
            if !shape.properties.isEmpty { shape.types = ["object"] } else if shape.items != nil { shape.types = ["array"] }
        }
        return shape
    }

    /// Adds another part's properties, required names and type (the first type given wins).
    private mutating func merge(_ other: SchemaShape) {
        if types.isEmpty { types = other.types }
        for property in other.properties where !properties.contains(where: { $0.name == property.name }) {
            properties.append(property)
        }
        required.formUnion(other.required)
        if items == nil { items = other.items }
        if enumValues.isEmpty { enumValues = other.enumValues }
        if format == nil { format = other.format }
        nullable = nullable || other.nullable
    }

    /// An integer or a number: what `numberAsString` changes.
    var isNumeric: Bool { types.first == "integer" || types.first == "number" }
}
