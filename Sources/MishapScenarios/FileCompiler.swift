import MishapEngine
import Yams

/// Compiles one scenario file's YAML tree into endpoints, collecting every problem it finds
/// rather than stopping at the first.
struct FileCompiler {
    /// The file as shown in messages, e.g. `scenarios/login.yaml`.
    let displayPath: String
    /// Where body files named by this file are looked up, and the folder they must stay inside.
    let bodyFiles: BodyFileResolver
    var diagnostics: [ScenarioDiagnostic] = []
    /// The cycle counters of the set this one replaces, by state key: an unchanged cycle rule
    /// keeps counting where it was.
    let previousCounters: [String: CycleCounter]
    /// The cycle counters of the rules compiled, by state key.
    var cycleCounters: [String: CycleCounter] = [:]

    init(displayPath: String, bodyFiles: BodyFileResolver, previousCounters: [String: CycleCounter] = [:]) {
        self.displayPath = displayPath
        self.bodyFiles = bodyFiles
        self.previousCounters = previousCounters
    }

    // MARK: Reporting

    mutating func error(_ message: String, at node: Node) {
        error(message, at: node.mark)
    }

    mutating func error(_ message: String, at mark: Mark?) {
        diagnostics.append(ScenarioDiagnostic(
            file: displayPath, line: mark?.line ?? 1, column: mark?.column ?? 1, message: message))
    }

    func location(_ node: Node) -> String {
        "\(displayPath):\(node.mark?.line ?? 1)"
    }

    // MARK: Reading nodes

    /// The pairs of a mapping in order, reporting unknown keys (with a suggestion) and keys that
    /// are not plain strings. Returns nil, after reporting, when `node` is not a mapping.
    mutating func mapping(_ node: Node, allowedKeys: [String], what: String) -> KeyedNodes? {
        guard case .mapping(let mapping) = node else {
            error("\(what) must be a mapping", at: node)
            return nil
        }
        var keyed = KeyedNodes()
        for (key, value) in mapping {
            guard let name = key.scalar?.string else {
                error("keys of \(what) must be strings", at: key)
                continue
            }
            guard allowedKeys.contains(name) else {
                let expected = allowedKeys.map { "'\($0)'" }.joined(separator: ", ")
                error("unknown key '\(name)' in \(what)\(Suggestion.hint(for: name, in: allowedKeys)); expected one of \(expected)", at: key)
                continue
            }
            keyed.pairs.append((name, key, value))
        }
        return keyed
    }

    /// The pairs of a mapping whose keys are free names (headers, query parameters), in order.
    mutating func namedMapping(_ node: Node, what: String) -> [(name: String, key: Node, value: Node)]? {
        guard case .mapping(let mapping) = node else {
            error("\(what) must be a mapping of names to values", at: node)
            return nil
        }
        var pairs: [(name: String, key: Node, value: Node)] = []
        for (key, value) in mapping {
            guard let name = key.scalar?.string, !name.isEmpty else {
                error("names in \(what) must be non-empty strings", at: key)
                continue
            }
            pairs.append((name, key, value))
        }
        return pairs
    }

    mutating func sequence(_ node: Node, what: String) -> [Node]? {
        guard case .sequence(let sequence) = node else {
            error("\(what) must be a list", at: node)
            return nil
        }
        return Array(sequence)
    }

    /// A scalar's text, whatever it looks like (`17` reads as "17").
    mutating func string(_ node: Node, what: String) -> String? {
        guard let scalar = node.scalar else {
            error("\(what) must be a single value, not a \(node.kindName)", at: node)
            return nil
        }
        return scalar.string
    }

    mutating func integer(_ node: Node, what: String) -> Int? {
        guard let scalar = node.scalar, let value = Int(scalar.string) else {
            error("\(what) must be a whole number", at: node)
            return nil
        }
        return value
    }

    mutating func boolean(_ node: Node, what: String) -> Bool? {
        guard let scalar = node.scalar, let value = YAMLScalar.boolean(scalar) else {
            error("\(what) must be true or false", at: node)
            return nil
        }
        return value
    }
}

/// A mapping's recognised keys, in file order.
struct KeyedNodes {
    var pairs: [(name: String, key: Node, value: Node)] = []

    subscript(_ name: String) -> Node? {
        pairs.first(where: { $0.name == name })?.value
    }

    func key(_ name: String) -> Node? {
        pairs.first(where: { $0.name == name })?.key
    }
}

extension Node {
    var kindName: String {
        switch self {
        case .scalar: return "value"
        case .mapping: return "mapping"
        case .sequence: return "list"
        case .alias: return "alias"
        }
    }
}

/// How plain YAML scalars read as JSON values (the YAML 1.2 core schema, which JSON shares).
enum YAMLScalar {
    enum Value {
        case null, bool(Bool), number(String), string(String)
    }

    static func boolean(_ scalar: Node.Scalar) -> Bool? {
        guard case .bool(let value) = resolve(scalar) else { return nil }
        return value
    }

    static func isNull(_ scalar: Node.Scalar) -> Bool {
        if case .null = resolve(scalar) { return true }
        return false
    }

    /// Quoted scalars and those tagged `!!str` are strings; plain ones may be null, booleans or numbers.
    static func resolve(_ scalar: Node.Scalar) -> Value {
        let text = scalar.string
        let tag = scalar.tag.rawValue
        if tag == Tag.Name.str.rawValue || (scalar.style != .plain && scalar.style != .any) || (!tag.isEmpty && tag != "?") {
            return .string(text)
        }
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        default: break
        }
        if let int = Int(text) { return .number(String(int)) }
        if text.first.map({ $0.isNumber || $0 == "-" || $0 == "+" || $0 == "." }) == true,
           text.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }),
           let double = Double(text), double.isFinite {
            return .number(double.description)
        }
        return .string(text)
    }
}
