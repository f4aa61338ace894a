import MishapEngine
import MishapPattern

/// Compiles the schemas of an API description into `ValueCheck`s, once, when it loads:
/// `$ref`s within the file followed (each compiled once and shared), external and cyclic ones
/// refused with their place, and every keyword it does not check noted for the load's warning.
struct OpenAPISchemaCompiler {
    /// The description's root, which `#/...` references are read from.
    let root: YAMLNode
    /// The file's name in messages.
    let file: String
    private(set) var errors: [ScenarioDiagnostic] = []
    /// Each keyword not checked, with where it is first used and how many schemas use it.
    private(set) var unchecked: [String: (mark: YAMLMark, count: Int)] = [:]
    /// Schemas already compiled, by reference.
    private var compiled: [String: ValueCheck] = [:]
    /// The references being compiled, outermost first: one met again is a cycle.
    private var resolving: [String] = []

    /// References followed inside one another at most (a chain longer than this is refused
    /// rather than recursed into).
    static let maximumReferenceDepth = 64

    /// Keywords that only describe a schema (annotations), which no value can fail.
    static let annotations: Set<String> = [
        "title", "description", "example", "examples", "default", "deprecated", "readOnly", "writeOnly", "xml",
        "externalDocs", "discriminator", "$comment", "$schema", "$id", "$anchor", "contentMediaType", "contentEncoding",
    ]

    init(root: YAMLNode, file: String) {
        self.root = root
        self.file = file
    }

    mutating func error(_ message: String, at node: YAMLNode) {
        errors.append(ScenarioDiagnostic(file: file, line: node.mark.line, column: node.mark.column, message: message))
    }

    mutating func noteUnchecked(_ keyword: String, at node: YAMLNode) {
        let previous = unchecked[keyword]
        unchecked[keyword] = (previous?.mark ?? node.mark, (previous?.count ?? 0) + 1)
    }

    // MARK: References

    /// The node `#/components/schemas/Pet` names; nil (with an error at `at`) when it is
    /// external or names nothing.
    mutating func target(of reference: String, at node: YAMLNode) -> YAMLNode? {
        guard reference.hasPrefix("#") else {
            error("$ref '\(reference)' is outside this file; only references within it (#/components/...) are read", at: node)
            return nil
        }
        var current = root
        for token in reference.dropFirst().split(separator: "/", omittingEmptySubsequences: true) {
            let key = (String(token).removingPercentEncodingIfPossible).replacing("~1", with: "/").replacing("~0", with: "~")
            switch current {
            case .mapping(let mapping):
                guard let next = mapping.first(where: { $0.key.scalar?.string == key })?.value else {
                    error("$ref '\(reference)' names nothing in this file (no '\(key)')", at: node)
                    return nil
                }
                current = next
            case .sequence(let sequence):
                guard let index = Int(key), sequence.indices.contains(index) else {
                    error("$ref '\(reference)' names nothing in this file (no item \(key))", at: node)
                    return nil
                }
                current = sequence[index]
            case .scalar:
                error("$ref '\(reference)' names nothing in this file ('\(key)' is under a scalar)", at: node)
                return nil
            }
        }
        return current
    }

    /// `node`, or what its `$ref` names (followed until a node without one): parameters and
    /// request bodies may be references too.
    mutating func dereferenced(_ node: YAMLNode) -> YAMLNode? {
        var current = node
        var seen: [String] = []
        while case .mapping(let mapping) = current, let refNode = mapping.member("$ref") {
            guard let reference = refNode.scalar?.string else {
                error("$ref must be a string", at: refNode)
                return nil
            }
            if seen.contains(reference) {
                error("$ref '\(reference)' refers back to itself (\((seen + [reference]).joined(separator: " → ")))", at: refNode)
                return nil
            }
            seen.append(reference)
            guard let next = target(of: reference, at: refNode) else { return nil }
            current = next
        }
        return current
    }

    // MARK: Schemas

    /// The check of the schema `node`.
    mutating func schema(_ node: YAMLNode) -> ValueCheck {
        switch node {
        case .scalar(let scalar):
            if let value = YAMLScalar.boolean(scalar) {
                // 3.1's boolean schemas: `true` allows anything, `false` nothing.
                var keywords = ValueCheck.Keywords()
                if !value { keywords.types = [] }
                return ValueCheck(keywords)
            }
            error("a schema must be a mapping (or true or false)", at: node)
            return .anything
        case .sequence:
            error("a schema must be a mapping (or true or false), not a list", at: node)
            return .anything
        case .mapping(let mapping):
            if let refNode = mapping.member("$ref") {
                let referenced = reference(refNode)
                let siblings = mapping.filter { pair in
                    let key = pair.key.scalar?.string ?? ""
                    return key != "$ref" && !Self.annotations.contains(key) && !key.hasPrefix("x-")
                }
                guard !siblings.isEmpty else { return referenced }
                // 3.1 checks the keywords beside a $ref too.
                var rest = mapping
                rest.pairs = siblings.map { ($0.key, $0.value) }
                var keywords = keywordsOf(rest)
                keywords.allOf.append(referenced)
                return ValueCheck(keywords)
            }
            return ValueCheck(keywordsOf(mapping))
        }
    }

    /// The check a `$ref` names, compiled once.
    private mutating func reference(_ refNode: YAMLNode) -> ValueCheck {
        guard let reference = refNode.scalar?.string else {
            error("$ref must be a string", at: refNode)
            return .anything
        }
        if let done = compiled[reference] { return done }
        if let start = resolving.firstIndex(of: reference) {
            let cycle = (resolving[start...] + [reference]).joined(separator: " → ")
            error("$ref '\(reference)' is cyclic (\(cycle)); recursive schemas are not checked", at: refNode)
            return .anything
        }
        guard resolving.count < Self.maximumReferenceDepth else {
            error("$ref '\(reference)' is more than \(Self.maximumReferenceDepth) references deep", at: refNode)
            return .anything
        }
        guard let target = target(of: reference, at: refNode) else { return .anything }
        resolving.append(reference)
        let check = schema(target)
        resolving.removeLast()
        compiled[reference] = check
        return check
    }
}

extension YAMLNode.Mapping {
    /// The value of the key `name`, when the mapping has it.
    func member(_ name: String) -> YAMLNode? {
        first { $0.key.scalar?.string == name }?.value
    }
}

extension String {
    /// The text with `%XX` escapes decoded (a reference's tokens may be percent-encoded); the
    /// text as it is when an escape is broken.
    var removingPercentEncodingIfPossible: String {
        guard contains("%") else { return self }
        var bytes: [UInt8] = []
        var iterator = Array(utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return self }
            bytes.append(value)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
