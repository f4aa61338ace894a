import MishapScenarios
import MishapTestSupport
import Testing

/// libyaml's words for the usual mistakes come with the hint a person needs, at the same place.
@Suite struct YAMLHintTests {
    @Test("A tab in indentation")
    func tab() {
        expectSingleDiagnostic("endpoint: GET /a\nrules:\n  - name: a\n\trespond: { status: 200 }\n", line: 4, column: 1,
                               containing: ["YAML syntax: found a tab character", "tabs cannot indent YAML: use spaces"])
    }

    @Test("A plain value holding ': '")
    func colonInAValue() {
        expectSingleDiagnostic("endpoint: GET /a\nrules:\n  - name: a\n    respond:\n      text: Error: try again\n", line: 5, column: 18,
                               containing: ["mapping values are not allowed", "quote a value that contains ': '"])
    }

    @Test("A quote left open, and a flow mapping left open")
    func unclosed() {
        expectSingleDiagnostic("endpoint: GET /a\nrules:\n  - name: a\n    respond: { text: \"oops }\n", line: 5, column: 1,
                               containing: ["while scanning a quoted scalar", "a quoted value is not closed"])
        expectSingleDiagnostic("endpoint: GET /a\nrules:\n  - name: a\n    respond: { status: 200, text: hi\n  - name: b\n    respond: { status: 200 }\n",
                               line: 5, column: 9, containing: ["did not find expected ',' or '}'", "a { } or [ ] is not closed"])
    }

    @Test("A list item out of line")
    func indentation() {
        expectSingleDiagnostic("endpoint: GET /a\nrules:\n  - name: a\n    respond: { status: 200 }\n   - name: b\n    respond: { status: 200 }\n",
                               line: 5, column: 4, containing: ["did not find expected '-' indicator", "check this line's indentation"])
    }
}
