import MishapEngine

/// A recorded request's query as its rule's `when` tests it: each parameter name with its
/// first value (the one a `query:` condition reads), in the order they were sent.
///
/// Two queries that differ only where no condition can see it (the order of the parameters,
/// a name's later values) are the same to a rule, so they are one `RecordedQuery`: the first
/// is recorded, the second is a repeat.
public struct RecordedQuery: Sendable, Hashable {
    /// Each name once, with its first value, in the order sent.
    public let parameters: [Field]
    /// The parameters in name order, what `==` and `hash(into:)` compare: sorted once, not at
    /// every comparison.
    private let sortedParameters: [Field]

    /// The query of a request as conditions. Refused when a name cannot be a condition's key:
    /// empty, or longer than scenario files allow.
    public init(_ query: [Field]) throws(Unrecordable) {
        var seen: Set<String> = []
        var parameters: [Field] = []
        for field in query where seen.insert(field.name).inserted {
            guard !field.name.isEmpty else { throw Unrecordable("its query has a parameter without a name") }
            guard field.name.utf8.count <= Self.maximumNameLength else {
                throw Unrecordable("its query has a parameter name over \(Self.maximumNameLength) bytes")
            }
            parameters.append(field)
        }
        self.parameters = parameters
        sortedParameters = parameters.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// The longest name a `when:` mapping takes (`FileCompiler.maximumNameLength`).
    static let maximumNameLength = 1024

    /// Whether there is nothing to test: a request without a query.
    public var isEmpty: Bool { parameters.isEmpty }

    /// Equal when they test the same values, whatever the order.
    public static func == (left: RecordedQuery, right: RecordedQuery) -> Bool {
        left.sortedParameters == right.sortedParameters
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(sortedParameters)
    }

    /// The `when:` lines of a rule that answers this query, indented by `indent` spaces; no
    /// lines for an empty query (the rule then answers every query). A value is tested for
    /// equality, an empty one with `empty: true` (an empty scalar would be null), and one
    /// holding `{{` (which a condition's value reads as a placeholder) with an anchored,
    /// escaped regular expression.
    public func whenLines(indent: Int) -> [String] {
        guard !isEmpty else { return [] }
        let pad = String(repeating: " ", count: indent)
        var lines = [pad + "when:", pad + "  query:"]
        for field in parameters {
            lines.append(pad + "    " + YAMLQuoting.quoted(field.name) + ": " + Self.condition(field.value))
        }
        return lines
    }

    /// The condition that holds exactly for `value`.
    static func condition(_ value: String) -> String {
        if value.isEmpty { return "{ empty: true }" }
        if value.contains("{{") { return "{ matches: " + YAMLQuoting.quoted("\\A" + regexEscaped(value) + "\\z") + " }" }
        return YAMLQuoting.quoted(value)
    }

    /// `text` as a regular expression that matches it literally: every ASCII character that is
    /// neither a letter nor a digit escaped with a backslash (which Mishap's patterns read as
    /// the character itself).
    static func regexEscaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.isASCII, scalar.value >= 0x21, scalar.value < 0x7F,
               !(("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)) {
                out.unicodeScalars.append("\\")
            }
            out.unicodeScalars.append(scalar)
        }
        return out
    }

    /// A rule name for this query: `noQuery` for none, else each parameter as `name-value`
    /// (letters, digits and `.` kept, anything else a `-`), joined by `_`, at most 60 characters.
    public var ruleName: String {
        guard !isEmpty else { return "noQuery" }
        let name = parameters.map { field in
            field.value.isEmpty ? RecordingNames.sanitized(field.name) : RecordingNames.sanitized(field.name) + "-" + RecordingNames.sanitized(field.value)
        }.joined(separator: "_")
        let cut = String(name.prefix(60))
        return cut.isEmpty || cut.allSatisfy({ $0 == "-" || $0 == "_" }) ? "query" : cut
    }

    /// The parameters tested, as a query for log lines (`?a=1&b=x y`: decoded, not encoded again).
    public var shown: String {
        isEmpty ? "" : "?" + parameters.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }
}
