import MishapEngine
import MishapSupport

// Named state in scenario files: `state:` declares values (shared by every file, one set per
// session), `when: state:` tests them, `set:` changes them when a rule answers.
extension FileCompiler {
    /// A declared value as the compiler resolves names: its slot, its type and where it was declared.
    struct DeclaredState {
        let slot: Int
        let kind: StateValue.Kind
        let location: String
    }

    static let stateDeclarationKeys = ["initial", "start", "for"]
    static let effectKeys = ["value", "increment", "for"]

    /// The `state:` declarations of a file, in order: `name: initial value`, or
    /// `name: {initial: false, start: true, for: 30s}` for a value that each new set starts with
    /// for a while (an outage from start-up).
    mutating func stateDeclarations(_ root: YAMLNode) -> [(StateDeclaration, YAMLNode)] {
        guard case .mapping(let file) = root,
              let stateNode = file.first(where: { $0.key.scalar?.string == "state" })?.value else { return [] }
        guard let pairs = namedMapping(stateNode, what: "'state' (names and their initial values)") else { return [] }
        var declarations: [(StateDeclaration, YAMLNode)] = []
        for (name, key, value) in pairs {
            guard Self.isStateName(name) else {
                error("'\(shown(name))' cannot name a state value: use letters, digits, '_' and '-', starting with a letter", at: key)
                continue
            }
            let location = "\(displayPath):\(key.mark.line):\(key.mark.column)"
            if case .mapping = value {
                guard let keyed = mapping(value, allowedKeys: Self.stateDeclarationKeys, what: "the declaration of '\(name)'") else { continue }
                guard let initialNode = keyed["initial"] else {
                    error("the declaration of '\(name)' needs 'initial:' (the value it has, and returns to)", at: value)
                    continue
                }
                guard let initial = stateValue(initialNode, what: "'initial'") else { continue }
                var start: StateDeclaration.Start?
                switch (keyed["start"], keyed["for"]) {
                case (nil, nil): break
                case (let startNode?, let forNode?):
                    guard let startValue = typedValue(startNode, kind: initial.kind, name: name, what: "'start'"),
                          let milliseconds = duration(forNode, what: "'for'") else { continue }
                    start = StateDeclaration.Start(value: startValue, milliseconds: milliseconds)
                default:
                    error("'start' and 'for' go together: the value each new set starts with, and for how long", at: value)
                    continue
                }
                declarations.append((StateDeclaration(name: name, initial: initial, start: start, location: location), key))
            } else if let initial = stateValue(value, what: "the initial value of '\(name)'") {
                declarations.append((StateDeclaration(name: name, initial: initial, location: location), key))
            }
        }
        return declarations
    }

    static func isStateName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }
    }

    /// A value whose type it declares: a quoted or plain string, a whole number or a boolean.
    private mutating func stateValue(_ node: YAMLNode, what: String) -> StateValue? {
        guard let scalar = node.scalar else {
            error("\(what) must be a string, a whole number or true/false, not a \(node.kindName)", at: node)
            return nil
        }
        switch YAMLScalar.resolve(scalar) {
        case .string(let text): return .string(text)
        case .bool(let flag): return .boolean(flag)
        case .number(let text):
            guard let number = Int(text) else {
                error("\(what) must be a string, a whole number or true/false; write \"\(shown(scalar.string))\" in quotes for a string", at: node)
                return nil
            }
            return .integer(number)
        case .null:
            error("\(what) is missing: give one ('' for an empty string, 0, false)", at: node)
            return nil
        }
    }

    /// A value for a state of `kind`, refused (located) when it is of another type.
    mutating func typedValue(_ node: YAMLNode, kind: StateValue.Kind, name: String, what: String) -> StateValue? {
        guard let scalar = node.scalar else {
            error("\(what) of '\(name)' must be a single value, not a \(node.kindName)", at: node)
            return nil
        }
        let value: StateValue?
        switch (YAMLScalar.resolve(scalar), kind) {
        case (.string(let text), .string): value = .string(text)
        case (.number(let text), .integer): value = Int(text).map(StateValue.integer)
        case (.bool(let flag), .boolean): value = .boolean(flag)
        case (.null, .string): value = .string("")
        case (_, .string): value = .string(scalar.string)
        default: value = nil
        }
        guard let value else {
            error("'\(name)' is \(Self.article(kind)) \(kind.rawValue); \(what) '\(shown(scalar.string))' is not one", at: node)
            return nil
        }
        return value
    }

    static func article(_ kind: StateValue.Kind) -> String {
        kind == .integer ? "an" : "a"
    }

    /// The declared value called `name`, or nil after reporting that it is not declared.
    mutating func declaredState(_ name: String, at node: YAMLNode) -> DeclaredState? {
        if let declared = state[name] { return declared }
        // A file that could not be read may declare it: its own problem is reported instead.
        if stateMayBeIncomplete { return nil }
        let names = state.keys.sorted()
        let known = names.isEmpty ? "no state is declared (declare it under 'state:' in any scenario file)"
            : "declared: " + names.joined(separator: ", ")
        error("state value '\(shown(name))' is not declared\(hint(for: name, in: names)); \(known)", at: node)
        return nil
    }

    /// `set:` a mapping of state names to what they become: a value (placeholders allowed for
    /// strings), `{increment: N}` (integers), either with `for: DURATION` after which the value
    /// returns to its initial one: `{value: true, for: 30s}`.
    mutating func compileEffects(_ node: YAMLNode) -> [StateEffect]? {
        guard let pairs = namedMapping(node, what: "'set' (state names and their new values)") else { return nil }
        var effects: [StateEffect] = []
        var valid = true
        for (name, key, value) in pairs {
            guard let declared = declaredState(name, at: key) else { valid = false; continue }
            var valueNode = value
            var operation: StateEffect.Operation?
            var milliseconds: Int?
            if case .mapping = value {
                guard let keyed = mapping(value, allowedKeys: Self.effectKeys, what: "the change of '\(name)'") else { valid = false; continue }
                if let forNode = keyed["for"] {
                    guard let duration = duration(forNode, what: "'for'") else { valid = false; continue }
                    milliseconds = duration
                }
                switch (keyed["value"], keyed["increment"]) {
                case (let given?, nil):
                    valueNode = given
                case (nil, let increment?):
                    guard declared.kind == .integer else {
                        error("'increment' needs a whole-number state; '\(name)' is \(Self.article(declared.kind)) \(declared.kind.rawValue)", at: increment)
                        valid = false
                        continue
                    }
                    guard let amount = integer(increment, what: "'increment'", in: -1_000_000_000...1_000_000_000,
                                               expected: "from -1000000000 to 1000000000") else { valid = false; continue }
                    operation = .increment(amount)
                case (_?, _?):
                    error("a change has 'value' or 'increment', not both", at: keyed.key("increment")!)
                    valid = false
                    continue
                case (nil, nil):
                    error("the change of '\(name)' needs 'value' or 'increment'", at: value)
                    valid = false
                    continue
                }
            }
            if operation == nil {
                if declared.kind == .string, let text = valueNode.scalar?.string, text.holdsDoubleBrace {
                    guard let template = template(text, escaping: .none, at: valueNode) else { valid = false; continue }
                    operation = .text(template)
                } else {
                    guard let typed = typedValue(valueNode, kind: declared.kind, name: name, what: "the value") else { valid = false; continue }
                    operation = .value(typed)
                }
            }
            if let operation {
                effects.append(StateEffect(slot: declared.slot, operation: operation, milliseconds: milliseconds))
            }
        }
        return valid ? effects : nil
    }

    /// Checks a condition on a state value against its type: whole-number tests need an
    /// integer, and equality values must be of the value's type.
    mutating func checkStateCondition(_ condition: Condition, name: String, kind: StateValue.Kind, at node: YAMLNode) -> Bool {
        switch condition {
        case .equals(let value):
            guard StateValue.parse(value, as: kind) != nil else {
                error("'\(name)' is \(Self.article(kind)) \(kind.rawValue); '\(shown(value))' is not one", at: node)
                return false
            }
        case .oneOf(let values):
            for value in values.sorted() where StateValue.parse(value, as: kind) == nil {
                error("'\(name)' is \(Self.article(kind)) \(kind.rawValue); '\(shown(value))' is not one", at: node)
                return false
            }
        case .number:
            guard kind == .integer else {
                error("'atLeast', 'atMost', 'lessThan' and 'greaterThan' compare whole numbers; '\(name)' is \(Self.article(kind)) \(kind.rawValue)", at: node)
                return false
            }
        case .absent, .present:
            error("a state value always has a value: test it with a value or a condition, not 'absent' or 'present'", at: node)
            return false
        case .not(let inner):
            return checkStateCondition(inner, name: name, kind: kind, at: node)
        case .all(let inner):
            for part in inner where !checkStateCondition(part, name: name, kind: kind, at: node) { return false }
        default:
            break
        }
        return true
    }
}
