/// A node of a composed YAML document: a scalar, a mapping or a list, each with the place it
/// starts in the text. An alias is composed as the node its anchor names (shared, not copied),
/// so a tree holds no aliases, and a node reached through one has the anchored node's place.
enum YAMLNode {
    case scalar(Scalar)
    case mapping(Mapping)
    case sequence(Sequence)

    /// A scalar: its text, its tag and how it was written.
    struct Scalar {
        /// The text, quotes and escapes resolved.
        var string: String
        /// The tag as written (`!!int 5` has `tag:yaml.org,2002:int`); `stringTag` for a quoted
        /// scalar without one; empty for a plain scalar without one.
        var tag: String
        var style: Style
        var mark: YAMLMark

        /// How a scalar was written.
        enum Style {
            case plain, singleQuoted, doubleQuoted, literal, folded
        }

        /// The tag of strings (`!!str`), which quoted scalars have unless tagged otherwise.
        static let stringTag = "tag:yaml.org,2002:str"
    }

    /// A mapping: its pairs in file order (duplicate keys are refused while composing).
    struct Mapping: RandomAccessCollection {
        var pairs: [(key: YAMLNode, value: YAMLNode)]
        /// The tag as written (`!!map {}`), or empty.
        var tag: String
        var mark: YAMLMark

        var startIndex: Int { pairs.startIndex }
        var endIndex: Int { pairs.endIndex }
        subscript(position: Int) -> (key: YAMLNode, value: YAMLNode) { pairs[position] }
    }

    /// A list: its items in file order.
    struct Sequence: RandomAccessCollection {
        var nodes: [YAMLNode]
        /// The tag as written (`!!seq []`), or empty.
        var tag: String
        var mark: YAMLMark

        var startIndex: Int { nodes.startIndex }
        var endIndex: Int { nodes.endIndex }
        subscript(position: Int) -> YAMLNode { nodes[position] }
    }

    /// Where the node starts: its anchor (`&name`) or tag when it has one.
    var mark: YAMLMark {
        switch self {
        case .scalar(let scalar): return scalar.mark
        case .mapping(let mapping): return mapping.mark
        case .sequence(let sequence): return sequence.mark
        }
    }

    /// The scalar, when the node is one.
    var scalar: Scalar? {
        guard case .scalar(let scalar) = self else { return nil }
        return scalar
    }
}

/// A place in a YAML text: 1-based line, and 1-based column counted in Unicode scalars.
/// Stored in 32 bits each (a scenario file is at most 16 MiB): every node of a tree has a mark,
/// and a file of 100,000 rules has millions of nodes.
struct YAMLMark: Equatable, Sendable, CustomStringConvertible {
    private var storedLine: UInt32
    private var storedColumn: UInt32

    init(line: Int, column: Int) {
        storedLine = UInt32(clamping: line)
        storedColumn = UInt32(clamping: column)
    }

    var line: Int {
        get { Int(storedLine) }
        set { storedLine = UInt32(clamping: newValue) }
    }
    var column: Int {
        get { Int(storedColumn) }
        set { storedColumn = UInt32(clamping: newValue) }
    }

    var description: String { "\(line):\(column)" }
}
