/// A mapping's keys checked for one given twice, compared as Yams compared them: scalars by
/// their text (Unicode canonical equivalence, as Swift compares strings) and tag, lists and
/// mappings item by item in order, and a missing tag or `!` as the kind's own (`!!str`,
/// `!!seq`, `!!map`), so `a` and `'a'` are one key but `a` and `!!int a` are two.
enum YAMLDuplicateKeys {
    /// Throws `duplicatedKeys` when `keys` has a key twice or more: every such key, in order
    /// (scalars by their text; lists and mappings by their items' keys), each shown by its text
    /// ("<uncovertable>" for a list or a mapping), placed at the first of them.
    static func check(_ keys: [YAMLNode]) throws(YAMLError) {
        guard keys.count > 1 else { return }
        // Most mappings of a scenario file have a handful of keys: comparing each pair costs
        // less than hashing them all into a dictionary, and finds a duplicate exactly when the
        // dictionary would (`hash` agrees with `same`).
        if keys.count <= pairwiseLimit && !hasPairwiseDuplicate(keys) { return }
        var seen: [Key: (first: Int, count: Int)] = [:]
        for (index, key) in keys.enumerated() {
            seen[Key(node: key), default: (index, 0)].count += 1
        }
        let duplicates = seen.values.filter { $0.count > 1 }.map(\.first)
        guard !duplicates.isEmpty else { return }
        let sorted = duplicates.sorted { first, second in
            precedes(keys[first], keys[second]) || (!precedes(keys[second], keys[first]) && first < second)
        }
        throw .duplicatedKeys(sorted.map { text(of: keys[$0]) ?? "<uncovertable>" }, mark: keys[sorted[0]].mark)
    }

    /// The most keys compared pair by pair (120 pairs) instead of hashed.
    static let pairwiseLimit = 16

    /// Whether two of `keys` are the same key.
    private static func hasPairwiseDuplicate(_ keys: [YAMLNode]) -> Bool {
        for first in keys.indices.dropLast() {
            for second in (first + 1)..<keys.count where same(keys[first], keys[second]) {
                return true
            }
        }
        return false
    }

    /// A key as a dictionary holds it, equal to another when YAML would take them for one.
    private struct Key: Hashable {
        let node: YAMLNode

        static func == (left: Key, right: Key) -> Bool { same(left.node, right.node) }

        func hash(into hasher: inout Hasher) { YAMLDuplicateKeys.hash(node, into: &hasher) }
    }

    private static let mapTag = "tag:yaml.org,2002:map"
    private static let sequenceTag = "tag:yaml.org,2002:seq"
    private static let valueTag = "tag:yaml.org,2002:value"

    /// `tag`, or `kindTag` when the node has none or the non-specific `!`.
    private static func resolved(_ tag: String, _ kindTag: String) -> String {
        tag.isEmpty || tag == "!" ? kindTag : tag
    }

    private static func same(_ left: YAMLNode, _ right: YAMLNode) -> Bool {
        switch (left, right) {
        case (.scalar(let a), .scalar(let b)):
            return a.string == b.string && resolved(a.tag, YAMLNode.Scalar.stringTag) == resolved(b.tag, YAMLNode.Scalar.stringTag)
        case (.mapping(let a), .mapping(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { same($0.key, $1.key) && same($0.value, $1.value) }
                && resolved(a.tag, mapTag) == resolved(b.tag, mapTag)
        case (.sequence(let a), .sequence(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
                && resolved(a.tag, sequenceTag) == resolved(b.tag, sequenceTag)
        default:
            return false
        }
    }

    private static func hash(_ node: YAMLNode, into hasher: inout Hasher) {
        switch node {
        case .scalar(let scalar):
            hasher.combine(0)
            hasher.combine(scalar.string)
            hasher.combine(resolved(scalar.tag, YAMLNode.Scalar.stringTag))
        case .mapping(let mapping):
            hasher.combine(1)
            hasher.combine(mapping.count)
            for (key, value) in mapping {
                hash(key, into: &hasher)
                hash(value, into: &hasher)
            }
            hasher.combine(resolved(mapping.tag, mapTag))
        case .sequence(let sequence):
            hasher.combine(2)
            hasher.combine(sequence.count)
            for item in sequence { hash(item, into: &hasher) }
            hasher.combine(resolved(sequence.tag, sequenceTag))
        }
    }

    /// Whether `left` sorts before `right`: scalars by text, lists by their items and mappings
    /// by their keys, item by item, the shorter first when one starts the other; nodes of two
    /// kinds are not ordered.
    private static func precedes(_ left: YAMLNode, _ right: YAMLNode) -> Bool {
        func lexicographic(_ left: [YAMLNode], _ right: [YAMLNode]) -> Bool {
            for (a, b) in zip(left, right) {
                if precedes(a, b) { return true }
                if precedes(b, a) { return false }
            }
            return left.count < right.count
        }
        switch (left, right) {
        case (.scalar(let a), .scalar(let b)): return a.string < b.string
        case (.mapping(let a), .mapping(let b)): return lexicographic(a.map(\.key), b.map(\.key))
        case (.sequence(let a), .sequence(let b)): return lexicographic(a.nodes, b.nodes)
        default: return false
        }
    }

    /// A key as the message shows it: a scalar's text; for a mapping, the value of its first
    /// key tagged `!!value`, if any.
    private static func text(of node: YAMLNode) -> String? {
        if case .mapping(let mapping) = node {
            for (key, value) in mapping where tag(of: key) == valueTag {
                return text(of: value)
            }
        }
        return node.scalar?.string
    }

    private static func tag(of node: YAMLNode) -> String {
        switch node {
        case .scalar(let scalar): return scalar.tag
        case .mapping(let mapping): return mapping.tag
        case .sequence(let sequence): return sequence.tag
        }
    }
}
