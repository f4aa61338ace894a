/// A YAML (or JSON) text read as a `JSONTree` with the scenario loader's own reader: libyaml's
/// events, the same limits (`YAMLLimits`: size, nesting, alias repetition) and the same located
/// errors as a scenario file. For the OpenAPI importer, which reads a description in YAML this
/// way before a JSON library decodes it, so that no second libyaml is linked.
public enum YAMLDocumentReader {
    /// A text that could not be read: its first problem, at its place.
    public struct Problem: Error, Sendable {
        public let diagnostic: ScenarioDiagnostic
    }

    /// The document of `text` as a tree (nil for a text with none), `file` naming the text in
    /// a problem's message. Plain scalars read as in scenario files (the YAML 1.2 core schema,
    /// which JSON shares); a mapping key must be a scalar.
    public static func read(_ text: String, file: String) throws(Problem) -> JSONTree? {
        let node: YAMLNode?
        do {
            node = try YAMLComposer.compose(text)
        } catch {
            throw Problem(diagnostic: ScenarioLoader.yamlDiagnostic(error, text: text, file: file))
        }
        guard let node else { return nil }
        return try tree(node, file: file)
    }

    /// The node as a tree; nesting is bounded by `YAMLLimits.maximumDepth`, so recursing is safe.
    private static func tree(_ node: YAMLNode, file: String) throws(Problem) -> JSONTree {
        switch node {
        case .scalar(let scalar):
            switch YAMLScalar.resolve(scalar) {
            case .null: return .null
            case .bool(let value): return .bool(value)
            case .number(let text): return .number(text)
            case .string(let text): return .string(text)
            }
        case .sequence(let sequence):
            var items: [JSONTree] = []
            items.reserveCapacity(sequence.count)
            for item in sequence { items.append(try tree(item, file: file)) }
            return .array(items)
        case .mapping(let mapping):
            var object = JSONTree.Object()
            for pair in mapping {
                guard let key = pair.key.scalar else {
                    throw Problem(diagnostic: ScenarioDiagnostic(file: file, line: pair.key.mark.line, column: pair.key.mark.column,
                                                                 message: "a mapping key must be a plain value, not a list or a mapping"))
                }
                object[key.string] = try tree(pair.value, file: file)
            }
            return .object(object)
        }
    }
}
