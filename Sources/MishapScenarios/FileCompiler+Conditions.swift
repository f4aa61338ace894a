import MishapSupport
import MishapEngine

extension FileCompiler {
    static let whenKeys = ["query", "headers", "body", "path", "state", "malformedBody"]
    static let conditionKeys = ["equals", "oneOf", "absent", "present", "empty", "length", "minLength", "maxLength",
                                "matches", "prefix", "suffix", "contains", "atLeast", "atMost", "lessThan", "greaterThan", "not"]

    /// `when:` is one mapping (every test must hold) or a list of them (any one must hold).
    /// Returns nil after reporting a problem.
    mutating func compileWhen(_ node: YAMLNode, path: PathPattern) -> [Predicate]? {
        if case .sequence = node {
            guard let items = sequence(node, what: "'when'"), !items.isEmpty else {
                error("'when' as a list needs at least one alternative", at: node)
                return nil
            }
            let predicates = items.map { compilePredicate($0, path: path) }
            return predicates.contains(where: { $0 == nil }) ? nil : predicates.compactMap { $0 }
        }
        return compilePredicate(node, path: path).map { [$0] }
    }

    private mutating func compilePredicate(_ node: YAMLNode, path: PathPattern) -> Predicate? {
        guard let keyed = mapping(node, allowedKeys: Self.whenKeys, what: "'when'") else { return nil }
        var predicate = Predicate()
        var valid = true
        for (name, _, value) in keyed.pairs {
            if name == "malformedBody" {
                guard let flag = boolean(value, what: "'malformedBody'") else { valid = false; continue }
                predicate.malformedBody = flag
                continue
            }
            guard let fields = namedMapping(value, what: "'\(name)'") else { valid = false; continue }
            for field in fields {
                let source: ValueSource
                switch name {
                case "query": source = .query(field.name)
                case "headers": source = .header(field.name)
                case "body":
                    source = .body(field.name.split(separator: ".", omittingEmptySubsequences: false).map(String.init))
                    if let feature = JSONPathLookalike.feature(of: field.name) {
                        warning(JSONPathLookalike.message(field.name, feature: feature), at: field.key)
                    }
                case "state":
                    guard let declared = declaredState(field.name, at: field.key) else { valid = false; continue }
                    guard let condition = compileCondition(field.value),
                          checkStateCondition(condition, name: field.name, kind: declared.kind, at: field.value) else {
                        valid = false
                        continue
                    }
                    predicate.conditions.append((.state(name: field.name, slot: declared.slot), condition))
                    continue
                default:
                    guard path.parameterNames.contains(field.name) else {
                        let known = path.parameterNames.isEmpty ? "the path has no {parameters}" : "the path's parameters are " + path.parameterNames.joined(separator: ", ")
                        error("unknown path parameter '\(field.name)'\(Suggestion.hint(for: field.name, in: path.parameterNames)); \(known)", at: field.key)
                        valid = false
                        continue
                    }
                    source = .pathParameter(field.name)
                }
                guard let condition = compileCondition(field.value) else { valid = false; continue }
                predicate.conditions.append((source, condition))
            }
        }
        return valid ? predicate : nil
    }

    /// Notes a warning at `node`: the set still loads (`ScenarioSet.warnings`).
    mutating func warning(_ message: String, at node: YAMLNode) {
        warnings.append(ScenarioDiagnostic(file: displayPath, line: max(1, node.mark.line), column: max(1, node.mark.column),
                                           message: message))
    }

    /// A value alone means equality, a list means one of, a mapping combines named tests.
    mutating func compileCondition(_ node: YAMLNode) -> Condition? {
        switch node {
        case .scalar(let scalar):
            if YAMLScalar.isNull(scalar) {
                error("an empty value matches nothing: write 'absent: true' or 'empty: true'", at: node)
                return nil
            }
            if scalar.string.holdsDoubleBrace {
                return template(scalar.string, escaping: .none, at: node).map(Condition.equalsText)
            }
            return .equals(scalar.string)
        case .sequence:
            return compileOneOf(node)
        case .mapping(let written):
            guard let keyed = mapping(node, allowedKeys: Self.conditionKeys, what: "a condition") else { return nil }
            var parts: [Condition] = []
            var valid = true
            for (name, _, value) in keyed.pairs {
                if let part = compileConditionKey(name, value) { parts.append(part) } else { valid = false }
            }
            guard valid else { return nil }
            // Misspelt keys were reported already; only a truly empty mapping gets this message.
            if parts.isEmpty && written.count > 0 { return nil }
            if parts.isEmpty {
                error("an empty condition tests nothing: write a value or one of \(Self.conditionKeys.joined(separator: ", "))", at: node)
                return nil
            }
            return parts.count == 1 ? parts[0] : .all(parts)
        }
    }

    private mutating func compileConditionKey(_ name: String, _ value: YAMLNode) -> Condition? {
        switch name {
        case "equals":
            guard let text = string(value, what: "'equals'") else { return nil }
            if text.holdsDoubleBrace { return template(text, escaping: .none, at: value).map(Condition.equalsText) }
            return .equals(text)
        case "atLeast", "atMost", "lessThan", "greaterThan":
            guard let number = integer(value, what: "'\(name)'", in: -Int(Int32.max)...Int(Int32.max),
                                       expected: "a whole number from -\(Int32.max) to \(Int32.max)") else { return nil }
            switch name {
            case "atLeast": return .number(min: number, max: nil)
            case "atMost": return .number(min: nil, max: number)
            case "lessThan": return .number(min: nil, max: number - 1)
            default: return .number(min: number + 1, max: nil)
            }
        case "oneOf": return compileOneOf(value)
        case "absent", "present", "empty":
            guard let flag = boolean(value, what: "'\(name)'") else { return nil }
            let condition: Condition = name == "absent" ? .absent : name == "present" ? .present : .empty
            return flag ? condition : .not(condition)
        case "length":
            guard let length = nonNegative(value, what: "'length'") else { return nil }
            return .length(min: length, max: length)
        case "minLength":
            return nonNegative(value, what: "'minLength'").map { .length(min: $0, max: nil) }
        case "maxLength":
            return nonNegative(value, what: "'maxLength'").map { .length(min: nil, max: $0) }
        case "matches":
            guard let source = string(value, what: "'matches'") else { return nil }
            do {
                return .matches(try Pattern(source))
            } catch {
                self.error("invalid regular expression '\(source)': \(error)", at: value)
                return nil
            }
        case "prefix": return string(value, what: "'prefix'").map(Condition.prefix)
        case "suffix": return string(value, what: "'suffix'").map(Condition.suffix)
        case "contains": return string(value, what: "'contains'").map(Condition.contains)
        default:
            return compileCondition(value).map(Condition.not)
        }
    }

    private mutating func compileOneOf(_ node: YAMLNode) -> Condition? {
        guard let items = sequence(node, what: "'oneOf'") else { return nil }
        var options = Set<String>()
        for item in items {
            guard let text = string(item, what: "each of 'oneOf'") else { return nil }
            options.insert(text)
        }
        return .oneOf(options)
    }

    private mutating func nonNegative(_ node: YAMLNode, what: String) -> Int? {
        guard let value = integer(node, what: what) else { return nil }
        guard value >= 0 else {
            error("\(what) must not be negative", at: node)
            return nil
        }
        return value
    }
}
