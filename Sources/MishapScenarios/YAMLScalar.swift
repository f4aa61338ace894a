/// How plain YAML scalars read as JSON values (the YAML 1.2 core schema, which JSON shares).
enum YAMLScalar {
    enum Value {
        case null, bool(Bool), number(String), string(String)
    }

    static func boolean(_ scalar: YAMLNode.Scalar) -> Bool? {
        guard case .bool(let value) = resolve(scalar) else { return nil }
        return value
    }

    static func isNull(_ scalar: YAMLNode.Scalar) -> Bool {
        if case .null = resolve(scalar) { return true }
        return false
    }

    /// Quoted scalars and those tagged `!!str` are strings; plain ones may be null, booleans or numbers.
    static func resolve(_ scalar: YAMLNode.Scalar) -> Value {
        let text = scalar.string
        let tag = scalar.tag
        if tag == YAMLNode.Scalar.stringTag || scalar.style != .plain || (!tag.isEmpty && tag != "?") {
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
