// libyaml (the system's, through pkg-config): its event parser is all of it Mishap uses.
import CYAML

/// An event of a YAML stream, as libyaml's parser gives them in file order, with the place it
/// starts.
struct YAMLEvent {
    enum Kind {
        case streamStart, streamEnd, documentStart, documentEnd
        /// `*name`.
        case alias(anchor: String)
        /// A scalar: its text, its tag (see
        /// `YAMLNode.Scalar.tag`), how it was written and its anchor.
        case scalar(value: String, tag: String, style: YAMLNode.Scalar.Style, anchor: String?)
        /// The start of a list or a mapping: its anchor, and its tag as written, or empty.
        case sequenceStart(anchor: String?, tag: String)
        case sequenceEnd
        case mappingStart(anchor: String?, tag: String)
        case mappingEnd
    }

    var kind: Kind
    var mark: YAMLMark
}

/// libyaml's event parser over a UTF-8 text. It reads the text in place, so it lives only
/// within `parse(_:_:)`.
struct YAMLEventParser: ~Copyable {
    private let parser: UnsafeMutablePointer<yaml_parser_t>
    private let initialized: Bool
    /// When set, every event is measured against the limits before `next()` returns it, and
    /// the first that goes beyond them is thrown instead (`YAMLError.limit`).
    var limits: YAMLLimits.Tracker?

    /// Runs `body` with a parser of `text`.
    static func parse<Result>(_ text: String, _ body: (inout YAMLEventParser) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable({ bytes -> Result in
            var parser = YAMLEventParser(bytes)
            return body(&parser)
        }) {
            return result
        }
        return Array(text.utf8).withUnsafeBufferPointer { bytes in
            var parser = YAMLEventParser(bytes)
            return body(&parser)
        }
    }

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        // libyaml keeps a pointer to the parser in it: it must not move.
        parser = .allocate(capacity: 1)
        parser.initialize(to: yaml_parser_t())
        initialized = yaml_parser_initialize(parser) == 1
        if initialized {
            yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING)
            yaml_parser_set_input_string(parser, bytes.baseAddress, bytes.count)
        }
    }

    deinit {
        if initialized { yaml_parser_delete(parser) }
        parser.deallocate()
    }

    /// The next event; once the stream has ended, `streamEnd` again.
    mutating func next() throws(YAMLError) -> YAMLEvent {
        guard initialized else { throw .memory }
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) == 1 else { throw error() }
        defer { yaml_event_delete(&event) }
        let next = YAMLEvent(kind: kind(of: event), mark: Self.mark(event.start_mark))
        if limits != nil, let violation = limits?.check(next) { throw .limit(violation) }
        return next
    }

    private func kind(of event: yaml_event_t) -> YAMLEvent.Kind {
        switch event.type {
        case YAML_STREAM_START_EVENT: return .streamStart
        case YAML_DOCUMENT_START_EVENT: return .documentStart
        case YAML_DOCUMENT_END_EVENT: return .documentEnd
        case YAML_ALIAS_EVENT: return .alias(anchor: Self.text(event.data.alias.anchor) ?? "")
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            let value = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
            // A quoted scalar without a tag is a string; a plain one without a tag has none.
            let tag = scalar.quoted_implicit == 1 ? YAMLNode.Scalar.stringTag : Self.text(scalar.tag) ?? ""
            return .scalar(value: value, tag: tag, style: Self.style(scalar.style), anchor: Self.text(scalar.anchor))
        case YAML_SEQUENCE_START_EVENT:
            let start = event.data.sequence_start
            return .sequenceStart(anchor: Self.text(start.anchor), tag: start.implicit != 0 ? "" : Self.text(start.tag) ?? "")
        case YAML_SEQUENCE_END_EVENT: return .sequenceEnd
        case YAML_MAPPING_START_EVENT:
            let start = event.data.mapping_start
            return .mappingStart(anchor: Self.text(start.anchor), tag: start.implicit != 0 ? "" : Self.text(start.tag) ?? "")
        case YAML_MAPPING_END_EVENT: return .mappingEnd
        default: return .streamEnd
        }
    }

    /// The parser's error, in its own words.
    private func error() -> YAMLError {
        let state = parser.pointee
        let problem = state.problem.map { String(cString: $0) } ?? ""
        let mark = Self.mark(state.problem_mark)
        let context = state.context.map { YAMLError.Context(text: String(cString: $0), mark: Self.mark(state.context_mark)) }
        switch state.error {
        case YAML_MEMORY_ERROR: return .memory
        case YAML_READER_ERROR:
            return .reader(problem: problem, offset: Int(state.problem_offset), value: state.problem_value)
        case YAML_SCANNER_ERROR: return .scanner(problem: problem, mark: mark, context: context)
        case YAML_COMPOSER_ERROR: return .composer(problem: problem, mark: mark, context: context)
        default: return .parser(problem: problem, mark: mark, context: context)
        }
    }

    private static func mark(_ mark: yaml_mark_t) -> YAMLMark {
        YAMLMark(line: Int(mark.line) + 1, column: Int(mark.column) + 1)
    }

    private static func text(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    private static func style(_ style: yaml_scalar_style_t) -> YAMLNode.Scalar.Style {
        switch style {
        case YAML_SINGLE_QUOTED_SCALAR_STYLE: return .singleQuoted
        case YAML_DOUBLE_QUOTED_SCALAR_STYLE: return .doubleQuoted
        case YAML_LITERAL_SCALAR_STYLE: return .literal
        case YAML_FOLDED_SCALAR_STYLE: return .folded
        // The parser gives no scalar the "any" style.
        default: return .plain
        }
    }
}
