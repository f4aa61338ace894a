/// Why a YAML text could not be read or composed: libyaml's own words (its problem, the context
/// it was in and their places), or the composer's.
enum YAMLError: Error, Equatable {
    /// A byte or character YAML does not allow (a control character, a non-character): the
    /// problem, the offset of its first byte, and the character's value (-1 when there is none).
    case reader(problem: String, offset: Int, value: Int32)
    /// Text that is no token (an unclosed quote, a tab for indentation).
    case scanner(problem: String, mark: YAMLMark, context: Context?)
    /// Tokens in an order YAML does not allow (a missing `]`, a key where none may be).
    case parser(problem: String, mark: YAMLMark, context: Context?)
    /// A stream that is not one document, or an alias no anchor before it names.
    case composer(problem: String, mark: YAMLMark, context: Context?)
    /// A mapping with a key given twice or more: those keys, and where the first of them is.
    case duplicatedKeys([String], mark: YAMLMark)
    /// libyaml could not allocate memory.
    case memory
    /// A text beyond one of `YAMLLimits`: too large, too deeply nested, or aliases that
    /// repeat too much.
    case limit(YAMLLimits.Violation)

    /// What libyaml was doing when it met the problem ("while parsing a flow mapping"), and
    /// where that started.
    struct Context: Equatable {
        var text: String
        var mark: YAMLMark
    }
}
