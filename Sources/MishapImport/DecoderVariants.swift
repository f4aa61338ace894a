import MishapScenarios

/// The answers decoders choke on, made from a success body and its schema: the first place in
/// the body (breadth first, an array's first item standing for all) where each change applies.
/// A change with no place to apply (no enum, no array, no date) is not made.
enum DecoderVariants {
    /// How many items the very long array has: 1,000, fewer (at least 100) when its items are
    /// large enough to take the body past `longArrayBytes`, and one more than `maxItems` when
    /// that is more. Hundreds of imported endpoints are all held in memory while served.
    static let longArrayCount = 1000
    static let longArrayBytes = 256 * 1024
    /// The member added by `extraField`.
    static let extraFieldName = "mishapUnexpectedField"
    /// The value `unknownEnumValue` puts where an enum is.
    static let unknownEnumValue = "MISHAP_UNKNOWN_VALUE"

    /// A place in the body: the value there, its schema's shape, the path to it, and whether
    /// its parent object requires it.
    private struct Site {
        var value: JSONTree
        var shape: SchemaShape
        var schema: JSONTree
        var path: [JSONStep]
        var required: Bool
        var inObject: Bool
    }

    /// The variants of `body`, a success answer of `schema`, in the order their rules are written.
    static func make(body: JSONTree, schema: JSONTree, resolver: ReferenceResolver) throws(ReferenceResolver.Problem) -> [DecoderVariant] {
        let sites = try sitesOf(body: body, schema: schema, resolver: resolver)
        var variants: [DecoderVariant] = []
        func add(_ name: String, _ change: String, _ tree: JSONTree) { variants.append(DecoderVariant(name: name, change: change, body: .json(tree))) }

        if let site = sites.first(where: { $0.inObject && $0.required }) {
            add("missingRequiredField", "the required field '\(describe(site.path))' left out", body.replacing(at: site.path, with: nil))
        }
        if let site = sites.first(where: { $0.inObject && $0.required && !$0.shape.nullable && $0.value != .null }) {
            add("nullNotNullable", "'\(describe(site.path))' is null, which its schema does not allow", body.replacing(at: site.path, with: .null))
        }
        if let site = sites.first(where: { $0.shape.isNumeric && $0.value.numberText != nil }), let text = site.value.numberText {
            add("numberAsString", "the number '\(describe(site.path))' sent as the string \"\(text)\"", body.replacing(at: site.path, with: .string(text)))
        }
        if let site = sites.first(where: { !$0.shape.enumValues.isEmpty && $0.value.string != nil }) {
            add("unknownEnumValue", "'\(describe(site.path))' is \(unknownEnumValue), not one of its enum values",
                body.replacing(at: site.path, with: .string(unknownEnumValue)))
        }
        if let site = sites.first(where: { $0.value.object != nil }) {
            add("extraField", "'\(describe(site.path + [.key(extraFieldName)]))' added, a field the schema does not declare",
                body.replacing(at: site.path + [.key(extraFieldName)], with: .string("not in the schema")))
        }
        if let site = sites.first(where: { $0.value.array != nil }), let items = site.value.array {
            add("emptyArray", "the array '\(describe(site.path))' empty", body.replacing(at: site.path, with: .array([])))
            if let first = items.first {
                let maximum = site.schema["maxItems"]?.numberText.flatMap { Int($0) } ?? 0
                let fitting = max(100, min(longArrayCount, longArrayBytes / max(1, first.jsonText.utf8.count + 1)))
                let count = min(max(fitting, maximum + 1), 100_000)
                add("longArray", "the array '\(describe(site.path))' with \(count) items",
                    body.replacing(at: site.path, with: .array(Array(repeating: first, count: count))))
            }
        }
        if let site = sites.first(where: { ($0.shape.format == "date-time" || $0.shape.format == "date") && $0.value.string != nil }) {
            let other = site.shape.format == "date" ? "01/02/2026" : "Fri, 02 Jan 2026 03:04:05 GMT"
            add("otherDateFormat", "'\(describe(site.path))' as \(other), not the \(site.shape.format ?? "") format of its schema",
                body.replacing(at: site.path, with: .string(other)))
        }
        let text = body.jsonText
        variants.append(DecoderVariant(name: "byteOrderMark", change: "a UTF-8 byte order mark (EF BB BF) before the JSON",
                                       body: .jsonBytes([0xEF, 0xBB, 0xBF] + Array(text.utf8))))
        let cut = String(decoding: Array(text.utf8).prefix(max(1, text.utf8.count / 2)), as: UTF8.self)
        variants.append(DecoderVariant(name: "truncatedJSON", change: "the JSON cut off after \(cut.utf8.count) of \(text.utf8.count) bytes",
                                       body: .jsonText(cut)))
        return variants
    }

    /// Every value of the body with its schema, breadth first; of a list, its first item only.
    private static func sitesOf(body: JSONTree, schema: JSONTree, resolver: ReferenceResolver) throws(ReferenceResolver.Problem) -> [Site] {
        var sites: [Site] = []
        var queue = [Site(value: body, shape: try SchemaShape.of(schema, resolver), schema: try resolver.resolve(schema).value,
                          path: [], required: false, inObject: false)]
        var next = 0
        while next < queue.count, sites.count < 10_000 {
            let site = queue[next]
            next += 1
            sites.append(site)
            if let object = site.value.object {
                for property in site.shape.properties {
                    guard let value = object[property.name] else { continue }
                    queue.append(Site(value: value, shape: try SchemaShape.of(property.schema, resolver),
                                      schema: try resolver.resolve(property.schema).value,
                                      path: site.path + [.key(property.name)], required: site.shape.required.contains(property.name), inObject: true))
                }
            } else if let items = site.value.array, let first = items.first, let itemSchema = site.shape.items {
                queue.append(Site(value: first, shape: try SchemaShape.of(itemSchema, resolver), schema: try resolver.resolve(itemSchema).value,
                                  path: site.path + [.index(0)], required: false, inObject: false))
            }
        }
        return sites
    }
}
