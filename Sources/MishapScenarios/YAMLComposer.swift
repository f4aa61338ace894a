/// Composes a YAML text into a tree of `YAMLNode`s from libyaml's events: one document or
/// none, every tag as written (no scalar is typed here; `YAMLScalar` does that), each alias
/// the node its anchor last named before it, and a mapping that gives a key twice refused.
///
/// Every event is measured against `YAMLLimits` as it is read, before it is composed, which
/// bounds a text's size, its nesting and what its aliases repeat. Composing keeps the open
/// collections on a list, not the call stack; comparing keys that are lists or mappings recurses.
enum YAMLComposer {
    /// The tree of `text`'s document, or nil when the text has none (it is empty, or only
    /// comments). A second document is an error, and so is a text beyond the limits
    /// (`YAMLError.limit`), reported at the first place that goes beyond them.
    static func compose(_ text: String) throws(YAMLError) -> YAMLNode? {
        if let violation = YAMLLimits.sizeViolation(text) { throw .limit(violation) }
        let composed = YAMLEventParser.parse(text) { parser in
            parser.limits = YAMLLimits.Tracker()
            return Result { () throws(YAMLError) -> YAMLNode? in try document(&parser) }
        }
        return try composed.get()
    }

    private static func document(_ parser: inout YAMLEventParser) throws(YAMLError) -> YAMLNode? {
        _ = try parser.next()  // The stream's start.
        guard case .documentStart = try parser.next().kind else { return nil }
        let root = try node(&parser)
        _ = try parser.next()  // The document's end.
        let next = try parser.next()
        if case .streamEnd = next.kind { return root }
        throw .composer(problem: "but found another document", mark: next.mark,
                        context: YAMLError.Context(text: "expected a single document in the stream",
                                                   mark: YAMLMark(line: 1, column: 1)))
    }

    /// A list or a mapping whose end has not been read yet, and what it holds so far (a
    /// mapping's keys and values alternate).
    private struct Open {
        var isMapping: Bool
        var anchor: String?
        var tag: String
        var mark: YAMLMark
        var items: [YAMLNode] = []
    }

    /// The node whose first event comes next, read whole.
    private static func node(_ parser: inout YAMLEventParser) throws(YAMLError) -> YAMLNode {
        var anchors: [String: YAMLNode] = [:]
        var open: [Open] = []
        while true {
            let event = try parser.next()
            let complete: YAMLNode
            switch event.kind {
            case .scalar(let value, let tag, let style, let anchor):
                complete = .scalar(YAMLNode.Scalar(string: value, tag: tag, style: style, mark: event.mark))
                if let anchor { anchors[anchor] = complete }
            case .alias(let name):
                guard let anchored = anchors[name] else {
                    throw .composer(problem: "found undefined alias", mark: event.mark, context: nil)
                }
                complete = anchored
            case .sequenceStart(let anchor, let tag):
                open.append(Open(isMapping: false, anchor: anchor, tag: tag, mark: event.mark))
                continue
            case .mappingStart(let anchor, let tag):
                open.append(Open(isMapping: true, anchor: anchor, tag: tag, mark: event.mark))
                continue
            case .sequenceEnd, .mappingEnd:
                guard let collection = open.popLast() else { throw unexpected(event) }
                if collection.isMapping {
                    let items = collection.items
                    let pairs = stride(from: 0, to: items.count - 1, by: 2).map { (key: items[$0], value: items[$0 + 1]) }
                    try YAMLDuplicateKeys.check(pairs.map(\.key))
                    complete = .mapping(YAMLNode.Mapping(pairs: pairs, tag: collection.tag, mark: collection.mark))
                } else {
                    complete = .sequence(YAMLNode.Sequence(nodes: collection.items, tag: collection.tag, mark: collection.mark))
                }
                if let anchor = collection.anchor { anchors[anchor] = complete }
            case .streamStart, .streamEnd, .documentStart, .documentEnd:
                throw unexpected(event)
            }
            guard !open.isEmpty else { return complete }
            open[open.count - 1].items.append(complete)
        }
    }

    /// An event libyaml's grammar does not put where it came.
    private static func unexpected(_ event: YAMLEvent) -> YAMLError {
        .composer(problem: "found an unexpected event", mark: event.mark, context: nil)
    }
}
