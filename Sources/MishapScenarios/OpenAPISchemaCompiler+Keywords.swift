import MishapEngine
import MishapPattern

extension OpenAPISchemaCompiler {
    /// The keywords that are checked, and how `type` names each type.
    static let typeNames: [String: ValueCheck.Types] = [
        "string": .string, "number": .number, "integer": .integer, "boolean": .boolean, "object": .object, "array": .array,
        "null": .null,
    ]

    /// The checks of one schema's keywords (its `$ref`, if any, is the caller's).
    mutating func keywordsOf(_ mapping: YAMLNode.Mapping) -> ValueCheck.Keywords {
        var keywords = ValueCheck.Keywords()
        var nullable = false
        var readOnly: Set<String> = []
        var exclusiveMinimum: (flag: Bool?, bound: ValueCheck.Bound?) = (nil, nil)
        var exclusiveMaximum: (flag: Bool?, bound: ValueCheck.Bound?) = (nil, nil)
        for (keyNode, value) in mapping.pairs {
            guard let key = keyNode.scalar?.string else { continue }
            switch key {
            case "type": keywords.types = types(value)
            case "nullable": nullable = value.scalar.flatMap(YAMLScalar.boolean) ?? false
            case "enum":
                guard case .sequence(let items) = value else {
                    error("enum must be a list", at: value)
                    continue
                }
                keywords.enumValues = items.map(Self.json)
            case "const": keywords.constValue = [Self.json(value)]
            case "format":
                guard let name = value.scalar?.string else { continue }
                if let format = StringFormat(rawValue: name) {
                    keywords.format = format
                } else {
                    noteUnchecked("format: \(name)", at: value)
                }
            case "minLength": keywords.minLength = count(value, key)
            case "maxLength": keywords.maxLength = count(value, key)
            case "minItems": keywords.minItems = count(value, key)
            case "maxItems": keywords.maxItems = count(value, key)
            case "pattern":
                guard let source = value.scalar?.string else {
                    error("pattern must be a string", at: value)
                    continue
                }
                do {
                    keywords.pattern = try Pattern(source)
                } catch {
                    self.error("pattern '\(source)' cannot be used: \(error)", at: value)
                }
            case "minimum": keywords.minimum = bound(value, key, exclusive: false)
            case "maximum": keywords.maximum = bound(value, key, exclusive: false)
            case "exclusiveMinimum":
                if let flag = value.scalar.flatMap(YAMLScalar.boolean) { exclusiveMinimum.flag = flag } else {
                    exclusiveMinimum.bound = bound(value, key, exclusive: true)
                }
            case "exclusiveMaximum":
                if let flag = value.scalar.flatMap(YAMLScalar.boolean) { exclusiveMaximum.flag = flag } else {
                    exclusiveMaximum.bound = bound(value, key, exclusive: true)
                }
            case "multipleOf":
                if let divisor = bound(value, key, exclusive: false), divisor.value > 0 {
                    keywords.multipleOf = divisor.value
                } else {
                    error("multipleOf must be a number above 0", at: value)
                }
            case "uniqueItems": keywords.uniqueItems = value.scalar.flatMap(YAMLScalar.boolean) ?? false
            case "minProperties": keywords.minProperties = count(value, key)
            case "maxProperties": keywords.maxProperties = count(value, key)
            case "not": keywords.refused = schema(value)
            case "required":
                guard case .sequence(let items) = value else {
                    // A property's `required: true` is a parameter's keyword, not a schema's.
                    error("required must be a list of property names", at: value)
                    continue
                }
                keywords.required = items.compactMap { $0.scalar?.string }
            case "properties":
                guard case .mapping(let properties) = value else {
                    error("properties must be a mapping", at: value)
                    continue
                }
                for (nameNode, propertyNode) in properties.pairs {
                    guard let name = nameNode.scalar?.string else { continue }
                    keywords.properties[name] = schema(propertyNode)
                    if case .mapping(let property) = propertyNode,
                       property.member("readOnly")?.scalar.flatMap(YAMLScalar.boolean) == true {
                        readOnly.insert(name)
                    }
                }
            case "additionalProperties":
                if let allowed = value.scalar.flatMap(YAMLScalar.boolean) {
                    keywords.additional = allowed ? .allowed : .forbidden
                } else {
                    keywords.additional = .checked(schema(value))
                }
            case "items":
                if case .sequence = value {
                    noteUnchecked("items as a list", at: value)
                } else {
                    keywords.items = schema(value)
                }
            case "allOf", "anyOf", "oneOf":
                guard case .sequence(let items) = value, !items.isEmpty else {
                    error("\(key) must be a list of schemas, not empty", at: value)
                    continue
                }
                let checks = items.map { schema($0) }
                switch key {
                case "allOf": keywords.allOf += checks
                case "anyOf": keywords.anyOf = checks
                default: keywords.oneOf = checks
                }
            default:
                if !Self.annotations.contains(key) && !key.hasPrefix("x-") { noteUnchecked(key, at: keyNode) }
            }
        }
        // A property the server sets (`readOnly`) is not sent in requests, even when required.
        keywords.required.removeAll { readOnly.contains($0) }
        if nullable, keywords.types != nil { keywords.types?.insert(.null) }
        if nullable, keywords.enumValues != nil { keywords.enumValues?.append(.null) }
        keywords.minimum = combined(keywords.minimum, exclusiveMinimum, greater: true)
        keywords.maximum = combined(keywords.maximum, exclusiveMaximum, greater: false)
        return keywords
    }

    /// The types `type` allows: one name, or (3.1) a list of them.
    private mutating func types(_ node: YAMLNode) -> ValueCheck.Types? {
        let names: [YAMLNode]
        switch node {
        case .scalar: names = [node]
        case .sequence(let list): names = Array(list)
        case .mapping:
            error("type must be a type's name or a list of them", at: node)
            return nil
        }
        var types: ValueCheck.Types = []
        for name in names {
            guard let text = name.scalar?.string, let type = Self.typeNames[text] else {
                error("unknown type '\(name.scalar?.string ?? "?")'; the types are string, number, integer, boolean, object, array and null", at: name)
                return nil
            }
            types.insert(type)
        }
        return types
    }

    /// A whole number of 0 or more (`minLength`, `maxItems`).
    private mutating func count(_ node: YAMLNode, _ key: String) -> Int? {
        guard let text = node.scalar?.string, let value = Int(text), value >= 0 else {
            error("\(key) must be a whole number, 0 or more", at: node)
            return nil
        }
        return value
    }

    /// A number bound (`minimum`, 3.1's `exclusiveMinimum`).
    private mutating func bound(_ node: YAMLNode, _ key: String, exclusive: Bool) -> ValueCheck.Bound? {
        guard let scalar = node.scalar, case .number(let text) = YAMLScalar.resolve(scalar), let value = Double(text) else {
            error("\(key) must be a number", at: node)
            return nil
        }
        return ValueCheck.Bound(value: value, exclusive: exclusive, written: scalar.string)
    }

    /// `minimum` with 3.0's `exclusiveMinimum: true`, or the stricter of it and 3.1's numeric one.
    private func combined(_ plain: ValueCheck.Bound?, _ exclusive: (flag: Bool?, bound: ValueCheck.Bound?),
                          greater: Bool) -> ValueCheck.Bound? {
        var result = plain
        if exclusive.flag == true { result?.exclusive = true }
        if let bound = exclusive.bound {
            if let current = result {
                let stricter = greater ? bound.value >= current.value : bound.value <= current.value
                if stricter { result = bound }
            } else {
                result = bound
            }
        }
        return result
    }

    /// A node of the description as a JSON value (`enum`'s and `const`'s values).
    static func json(_ node: YAMLNode) -> JSONValue {
        switch node {
        case .scalar(let scalar):
            switch YAMLScalar.resolve(scalar) {
            case .null: return .null
            case .bool(let value): return .bool(value)
            case .number(let text): return .number(text)
            case .string(let text): return .string(text)
            }
        case .sequence(let items): return .array(items.map(json))
        case .mapping(let mapping):
            return .object(mapping.pairs.map { ($0.key.scalar?.string ?? "", json($0.value)) })
        }
    }
}
