/// A regular expression compiled once when the scenario loads, matched in linear time.
///
/// The syntax is the common subset of Swift's `Regex` (and PCRE) that an automaton can match
/// without backtracking: literals and escapes, `.`, character classes, `\d \w \s \h \v` and their
/// negations, the anchors `^ $ \A \z \Z \b \B`, groups, alternation, greedy and lazy quantifiers,
/// and the flags `i`, `m`, `s` and `x`. Matching follows Swift's defaults: it works on characters
/// (grapheme clusters, as `String.count` counts them), `\d \w \s` are Unicode-aware, `.` does not
/// match a newline and `$` matches only at the very end.
///
/// Constructs that need backtracking (backreferences, lookaround, atomic groups, possessive
/// quantifiers, conditionals, recursion) are refused when the pattern compiles, so a match costs at
/// most the program size times the length of the value: a hostile value cannot hang a thread.
public struct Pattern: Sendable {
    /// The expression as written.
    public let source: String
    let program: PatternProgram

    /// Compiles `source`, throwing a ``PatternError`` when it is not a valid expression or uses a
    /// construct that cannot be matched in linear time.
    public init(_ source: String) throws {
        var parser = PatternParser(source)
        let tree = try parser.parse()
        self.program = try PatternProgram(tree)
        self.source = source
    }

    /// Whether the expression matches somewhere in `value` (anchor it with `^…$` for the whole value).
    public func matches(_ value: String) -> Bool {
        program.matches(value)
    }
}
