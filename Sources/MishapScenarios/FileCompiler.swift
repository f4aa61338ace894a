import MishapSupport
import MishapEngine

/// Compiles one scenario file's YAML tree into endpoints, collecting every problem it finds
/// rather than stopping at the first.
struct FileCompiler {
    /// The file as shown in messages, e.g. `scenarios/login.yaml`.
    let displayPath: String
    /// Where body files named by this file are looked up, and the folder they must stay inside.
    let bodyFiles: BodyFileResolver
    var diagnostics: [ScenarioDiagnostic] = []
    /// What loads but is likely a mistake (a body field written as JSONPath), located.
    var warnings: [ScenarioDiagnostic] = []
    /// The cycle counters of the set this one replaces, by state key: an unchanged cycle rule
    /// keeps counting where it was.
    let previousCounters: [String: CycleCounter]
    /// The cycle counters of the rules compiled, by state key.
    var cycleCounters: [String: CycleCounter] = [:]
    /// The quota counts of the set this one replaces, by state key, as `previousCounters`.
    var previousQuotas: [String: QuotaCounter] = [:]
    /// The quota counts of the rules and endpoints compiled, by state key.
    var quotaCounters: [String: QuotaCounter] = [:]
    /// The state values every file declares, by name.
    var state: [String: DeclaredState] = [:]
    /// Whether a file that may declare state could not be read, so a name missing from `state`
    /// is not reported as undeclared.
    var stateMayBeIncomplete = false
    /// Rules this file adds to endpoints declared elsewhere (`extends:`), placed by the loader.
    var extensions: [EndpointExtension] = []
    /// Problems found beyond `maximumDiagnostics`: how many, and where the first is.
    var unreported: (count: Int, line: Int, column: Int)?
    /// Header lists, bodies and prepared responses the file's rules have in common, stored once.
    let sharedParts = SharedResponseParts()
    /// Why a `proxy` URL cannot be used where the rules will run, or nil: one that points at the
    /// server compiling them (rules added at runtime). Asked once its form is known to be good.
    var proxyProblem: (@Sendable (String) -> String?)?

    /// The most problems reported for one file: a file of a million wrong keys gets a thousand
    /// messages and a count of the rest.
    static let maximumDiagnostics = 1000

    /// The longest name of a header, query parameter, body field or path parameter, and the
    /// longest `endpoint:` declaration: far beyond any real one, and short enough that a
    /// misspelt name is compared with the known ones quickly.
    static let maximumNameLength = 1024
    static let maximumEndpointLength = 4096

    init(displayPath: String, bodyFiles: BodyFileResolver, previousCounters: [String: CycleCounter] = [:]) {
        self.displayPath = displayPath
        self.bodyFiles = bodyFiles
        self.previousCounters = previousCounters
    }

    // MARK: Reporting

    mutating func error(_ message: String, at node: YAMLNode) {
        error(message, at: node.mark)
    }

    mutating func error(_ message: String, at mark: YAMLMark) {
        let line = max(1, mark.line), column = max(1, mark.column)
        guard diagnostics.count < Self.maximumDiagnostics else {
            if let first = unreported {
                unreported = (first.count + 1, first.line, first.column)
            } else {
                unreported = (1, line, column)
            }
            return
        }
        diagnostics.append(ScenarioDiagnostic(file: displayPath, line: line, column: column, message: message))
    }

    /// ` (did you mean 'x'?)` when `word` is close to a candidate; words far longer than any
    /// candidate are not compared (the comparison grows with the word's length).
    func hint(for word: String, in candidates: [String]) -> String {
        let longest = candidates.map(\.utf8.count).max() ?? 0
        guard word.utf8.count <= longest + 3 else { return "" }
        return Suggestion.hint(for: word, in: candidates)
    }

    /// User text as quoted in a message: cut when long, so one huge value cannot make a huge message.
    func shown(_ text: some StringProtocol) -> String {
        YAMLLimits.shown(String(text))
    }

    func location(_ node: YAMLNode) -> String {
        "\(displayPath):\(node.mark.line)"
    }

    // MARK: Reading nodes

    /// The pairs of a mapping in order, reporting unknown keys (with a suggestion) and keys that
    /// are not plain strings. Returns nil, after reporting, when `node` is not a mapping.
    mutating func mapping(_ node: YAMLNode, allowedKeys: [String], what: String) -> KeyedNodes? {
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
                error("unknown key '\(shown(name))' in \(what)\(hint(for: name, in: allowedKeys)); expected one of \(expected)", at: key)
                continue
            }
            keyed.pairs.append((name, key, value))
        }
        return keyed
    }

    /// The pairs of a mapping whose keys are free names (headers, query parameters), in order.
    mutating func namedMapping(_ node: YAMLNode, what: String) -> [(name: String, key: YAMLNode, value: YAMLNode)]? {
        guard case .mapping(let mapping) = node else {
            error("\(what) must be a mapping of names to values", at: node)
            return nil
        }
        var pairs: [(name: String, key: YAMLNode, value: YAMLNode)] = []
        for (key, value) in mapping {
            guard let name = key.scalar?.string, !name.isEmpty else {
                error("names in \(what) must be non-empty strings", at: key)
                continue
            }
            guard name.utf8.count <= Self.maximumNameLength else {
                error("names in \(what) must be at most \(Self.maximumNameLength) bytes long", at: key)
                continue
            }
            pairs.append((name, key, value))
        }
        return pairs
    }

    mutating func sequence(_ node: YAMLNode, what: String) -> [YAMLNode]? {
        guard case .sequence(let sequence) = node else {
            error("\(what) must be a list", at: node)
            return nil
        }
        return Array(sequence)
    }

    /// A scalar's text, whatever it looks like (`17` reads as "17").
    mutating func string(_ node: YAMLNode, what: String) -> String? {
        guard let scalar = node.scalar else {
            error("\(what) must be a single value, not a \(node.kindName)", at: node)
            return nil
        }
        return scalar.string
    }

    mutating func integer(_ node: YAMLNode, what: String) -> Int? {
        guard let scalar = node.scalar, let value = Int(scalar.string) else {
            error("\(what) must be a whole number", at: node)
            return nil
        }
        return value
    }

    /// A whole number within `range`; otherwise a problem saying "WHAT must be EXPECTED", for a
    /// number too large to hold as well.
    mutating func integer(_ node: YAMLNode, what: String, in range: ClosedRange<Int>, expected: String) -> Int? {
        guard let scalar = node.scalar, Self.isWholeNumber(scalar.string) else {
            error("\(what) must be a whole number", at: node)
            return nil
        }
        guard let value = Int(scalar.string), range.contains(value) else {
            error("\(what) must be \(expected)", at: node)
            return nil
        }
        return value
    }

    /// Decimal digits, with an optional sign.
    static func isWholeNumber(_ text: String) -> Bool {
        let digits = text.hasPrefix("-") || text.hasPrefix("+") ? text.utf8.dropFirst() : text.utf8[...]
        return !digits.isEmpty && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    mutating func boolean(_ node: YAMLNode, what: String) -> Bool? {
        guard let scalar = node.scalar, let value = YAMLScalar.boolean(scalar) else {
            error("\(what) must be true or false", at: node)
            return nil
        }
        return value
    }
}

extension YAMLNode {
    /// What the node is, as messages name it: a value, a mapping or a list.
    var kindName: String {
        switch self {
        case .scalar: return "value"
        case .mapping: return "mapping"
        case .sequence: return "list"
        }
    }
}
