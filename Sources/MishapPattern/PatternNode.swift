/// A parsed regular expression, before compilation. Flags are already applied: each atom and
/// anchor carries the meaning it has where it was written.
indirect enum PatternNode: Sendable {
    case empty
    /// Consumes one character.
    case atom(CharacterMatcher)
    /// Consumes nothing; holds or not at a position.
    case assertion(PatternAssertion)
    case sequence([PatternNode])
    case alternation([PatternNode])
    /// `max` nil: unbounded.
    case repetition(PatternNode, min: Int, max: Int?)
}

/// A test that consumes nothing: it holds or not at a position of the value.
enum PatternAssertion: Int32, Sendable {
    /// `\A`, and `^` without the `m` flag.
    case startOfSubject
    /// `\z`, and `$` without the `m` flag (Swift's `$` does not match before a final newline).
    case endOfSubject
    /// `\Z`: the end, or before a newline that ends the value.
    case endOfSubjectBeforeNewline
    /// `^` under the `m` flag.
    case startOfLine
    /// `$` under the `m` flag.
    case endOfLine
    /// `\b`, on Unicode word boundaries (UAX #29) as Swift's default.
    case wordBoundary
    /// `\B`.
    case notWordBoundary
}
