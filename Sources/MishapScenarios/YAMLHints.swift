/// What a person needs after libyaml's words for the usual mistakes, found by looking at the
/// source line where the error is (libyaml's message alone is often about a symptom: "found
/// character that cannot start any token" for a tab).
enum YAMLHints {
    /// A hint for a YAML syntax error reported as `problem` at `line` (1-based) of `text`, or nil.
    static func hint(problem: String, context: String?, line: Int, in text: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count else { return nil }
        let source = lines[line - 1]
        let before = line >= 2 ? lines[line - 2] : ""
        let indentation = source.prefix { $0 == " " || $0 == "\t" }
        if indentation.contains("\t") || (problem.contains("cannot start any token") && source.contains("\t")) {
            return "tabs cannot indent YAML: use spaces"
        }
        if problem.contains("mapping values are not allowed") {
            return "quote a value that contains ': ' (for example reason: \"Error: try again\")"
        }
        let quoted = context?.contains("quoted scalar") == true || problem.contains("quoted scalar")
        if quoted || (problem.contains("end of stream") && (source.filter { $0 == "\"" }.count % 2 == 1 || before.filter { $0 == "\"" }.count % 2 == 1)) {
            return "a quoted value is not closed: check its quotes"
        }
        if problem.contains("did not find expected ',' or '}'") || problem.contains("did not find expected ',' or ']'") {
            return "a { } or [ ] is not closed, or a value in it holds ',' '{' '}' '[' or ']' and needs quotes"
        }
        if problem.contains("did not find expected key") || problem.contains("did not find expected '-' indicator") {
            return "check this line's indentation against the lines above: items of one mapping or list line up"
        }
        return nil
    }
}
