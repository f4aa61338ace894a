import MishapEngine
@testable import MishapScenarios
import Testing

/// The YAML tree scenario files are compiled from, composed from libyaml's events: nodes,
/// tags, styles and places, aliases, documents, duplicate keys and errors.
@Suite("Composing YAML")
struct YAMLComposerTests {
    /// The tree of `text`, which must compose.
    static func compose(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> YAMLNode {
        try #require(try YAMLComposer.compose(text), sourceLocation: sourceLocation)
    }

    /// The error composing `text` gives, which must fail.
    static func failure(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> YAMLError? {
        do {
            _ = try YAMLComposer.compose(text)
            Issue.record("composed, but an error was expected", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    /// The located problem `text` gives as a scenario file, which must be its only one.
    static func problem(_ text: String) -> String {
        do {
            _ = try ScenarioLoader.load(yaml: text)
            return "loaded"
        } catch {
            return error.diagnostics.map(\.description).joined(separator: "\n")
        }
    }

    /// The JSON body a file of one `GET /x` rule answers with, its response written on line 5.
    static func jsonBody(_ json: String) throws -> String {
        let text = "endpoint: GET /x\nrules:\n  - name: a\n    respond:\n      json: \(json)\n"
        let engine = try ScenarioLoader.load(yaml: text).makeEngine()
        return String(decoding: engine.respond(to: Request(method: "GET", path: "/x")).body, as: UTF8.self)
    }

    @Test("Mappings keep their order; every node has its 1-based line and column")
    func shapeAndMarks() throws {
        let root = try Self.compose("b: 1\na:\n  - x\n  - [y, {z: 2}]\n")
        guard case .mapping(let mapping) = root else { Issue.record("not a mapping: \(root)"); return }
        #expect(mapping.map { $0.key.scalar?.string } == ["b", "a"])
        #expect(mapping.mark == YAMLMark(line: 1, column: 1))
        #expect(mapping[0].value.mark == YAMLMark(line: 1, column: 4))
        guard case .sequence(let list) = mapping[1].value else { Issue.record("not a list"); return }
        #expect(list.mark == YAMLMark(line: 3, column: 3))
        #expect(list.map(\.mark) == [YAMLMark(line: 3, column: 5), YAMLMark(line: 4, column: 5)])
        guard case .sequence(let flow) = list[1], case .mapping(let inner) = flow[1] else { Issue.record("not nested"); return }
        #expect(inner.mark == YAMLMark(line: 4, column: 9))
        #expect(inner[0].value.scalar?.string == "2")
        // Columns count Unicode scalars, not bytes.
        let wide = try Self.compose("é€: x\n")
        guard case .mapping(let pairs) = wide else { Issue.record("not a mapping"); return }
        #expect(pairs[0].value.mark == YAMLMark(line: 1, column: 5))
    }

    @Test("Tags as written; a quoted scalar without one is !!str, a plain one has none")
    func tagsAndStyles() throws {
        let root = try Self.compose("""
            - plain
            - 'single'
            - "double"
            - |
              literal
            - >
              folded
            - !!int "5"
            - ! bang
            - !!str 7
            - !custom {a: 1}
            - !!seq [1]
            - [2]
            """)
        guard case .sequence(let items) = root else { Issue.record("not a list"); return }
        let scalars = items.prefix(8).compactMap(\.scalar)
        #expect(scalars.map(\.style) == [.plain, .singleQuoted, .doubleQuoted, .literal, .folded, .doubleQuoted, .plain, .plain])
        #expect(scalars.map(\.tag) == ["", YAMLNode.Scalar.stringTag, YAMLNode.Scalar.stringTag, YAMLNode.Scalar.stringTag,
                                       YAMLNode.Scalar.stringTag, "tag:yaml.org,2002:int", "!", YAMLNode.Scalar.stringTag])
        #expect(scalars.map(\.string) == ["plain", "single", "double", "literal\n", "folded\n", "5", "bang", "7"])
        guard case .mapping(let custom) = items[8], case .sequence(let tagged) = items[9],
              case .sequence(let untagged) = items[10] else { Issue.record("not collections"); return }
        #expect(custom.tag == "!custom")
        #expect(tagged.tag == "tag:yaml.org,2002:seq")
        #expect(untagged.tag == "")
    }

    @Test("Scalars keep every character: NUL, and a byte order mark inside the text")
    func scalarText() throws {
        let root = try Self.compose("- \"a\\0b\"\n- \"\u{FEFF}x\"\n- \"\\uFEFFy\"\n")
        guard case .sequence(let items) = root else { Issue.record("not a list"); return }
        #expect(items.map { $0.scalar?.string } == ["a\u{0}b", "\u{FEFF}x", "\u{FEFF}y"])
    }

    @Test("An alias is the node its anchor last named before it, place included")
    func aliases() throws {
        let root = try Self.compose("a: &x [1, 2]\nb: *x\nc: &x three\nd: *x\n")
        guard case .mapping(let mapping) = root,
              case .sequence(let first) = mapping[0].value, case .sequence(let repeated) = mapping[1].value else {
            Issue.record("not the expected shape: \(root)")
            return
        }
        #expect(repeated.mark == first.mark)
        #expect(repeated.mark == YAMLMark(line: 1, column: 4))
        #expect(repeated.map { $0.scalar?.string } == ["1", "2"])
        #expect(mapping[3].value.scalar?.string == "three")
        #expect(mapping[3].value.mark == YAMLMark(line: 3, column: 4))
        #expect(Self.failure("a: *nowhere\n") == .composer(problem: "found undefined alias", mark: YAMLMark(line: 1, column: 4), context: nil))
        // An anchor names its node once the node is complete: inside it, the name is not yet known.
        #expect(Self.problem("a: &x [*x]\n") == "inline.yaml:1:8: YAML syntax: found undefined alias")
    }

    @Test("A value aliasing a key keeps its own type in a JSON body")
    func aliasedKeysKeepTheirType() throws {
        #expect(try Self.jsonBody("{ &t true : 1, v: *t }") == #"{"true":1,"v":true}"#)
        #expect(try Self.jsonBody("{ v: &t 5, w: { *t : 1 } }") == #"{"v":5,"w":{"5":1}}"#)
    }

    @Test("No document is no tree; one empty document is an empty scalar; a second document is an error")
    func documents() throws {
        #expect(try YAMLComposer.compose("") == nil)
        #expect(try YAMLComposer.compose("# only a comment\n") == nil)
        let empty = try Self.compose("---\n")
        #expect(empty.scalar?.string == "")
        #expect(empty.mark == YAMLMark(line: 2, column: 1))
        #expect(try Self.compose("a: 1\n...\n").scalar == nil)
        #expect(Self.failure("a: 1\n---\nb: 2\n") == .composer(
            problem: "but found another document", mark: YAMLMark(line: 2, column: 1),
            context: YAMLError.Context(text: "expected a single document in the stream", mark: YAMLMark(line: 1, column: 1))))
        #expect(Self.problem("a: 1\n---\nb: 2\n")
            == "inline.yaml:2:1: YAML syntax: but found another document expected a single document in the stream")
        #expect(Self.problem("") == "inline.yaml:1:1: a scenario file must be a mapping; this one is empty (0 bytes)")
    }

    @Test("Keys equal in text and tag are duplicates: 'a' and a are, !!int a and a are not")
    func duplicateScalarKeys() {
        #expect(Self.failure("b: 1\na: 2\n'b': 3\n!!str a: 4\n") == .duplicatedKeys(["a", "b"], mark: YAMLMark(line: 2, column: 1)))
        #expect(Self.problem("b: 1\na: 2\n'b': 3\n!!str a: 4\n") == "inline.yaml:2:1: duplicate key 'a', 'b' in one mapping")
        #expect(Self.failure("! a: 1\na: 2\n") == .duplicatedKeys(["a"], mark: YAMLMark(line: 1, column: 1)))
        // Canonically equivalent texts are one key: é precomposed, and e with a combining accent.
        #expect(Self.failure("\"\u{E9}\": 1\n\"e\u{301}\": 2\n") == .duplicatedKeys(["\u{E9}"], mark: YAMLMark(line: 1, column: 1)))
        #expect(throws: Never.self) { try YAMLComposer.compose("!!int a: 1\na: 2\n!custom a: 3\n") }
        // A key reached through an alias is placed where its anchor is.
        #expect(Self.failure("x: &k a\nm:\n  *k : 1\n  a: 2\n") == .duplicatedKeys(["a"], mark: YAMLMark(line: 1, column: 4)))
        // Small mappings are compared pair by pair, larger ones hashed: the same answer either way.
        for count in [YAMLDuplicateKeys.pairwiseLimit, YAMLDuplicateKeys.pairwiseLimit + 1, 200] {
            let keys = (0..<count - 2).map { "k\($0): 1\n" }.joined()
            #expect(throws: Never.self) { try YAMLComposer.compose(keys + "'x': 1\n!!int x: 2\n") }
            #expect(Self.failure(keys + "x: 1\n'x': 2\n") == .duplicatedKeys(["x"], mark: YAMLMark(line: count - 1, column: 1)))
            #expect(Self.failure("k\(count - 3): 0\n" + keys + "x: 1\n") == .duplicatedKeys(["k\(count - 3)"], mark: YAMLMark(line: 1, column: 1)))
        }
    }

    @Test("Lists and mappings as keys are duplicates item by item, in order, and shown as <uncovertable>")
    func duplicateCollectionKeys() {
        #expect(Self.failure("? [a, b]\n: 1\n? [a, b]\n: 2\n? {x: 1}\n: 3\n? {x: 1}\n: 4\nz: 1\nz: 2\n")
            == .duplicatedKeys(["<uncovertable>", "<uncovertable>", "z"], mark: YAMLMark(line: 1, column: 3)))
        #expect(throws: Never.self) { try YAMLComposer.compose("? [a, b]\n: 1\n? [b, a]\n: 2\n? {x: 1, y: 2}\n: 3\n? {y: 2, x: 1}\n: 4\n") }
        #expect(throws: Never.self) { try YAMLComposer.compose("? [a]\n: 1\n? !!set [a]\n: 2\n") }
        // Lists sort by their items, and a list that starts another comes first.
        #expect(Self.failure("? [b]\n: 1\n? [a, c]\n: 2\n? [a]\n: 3\n? [b]\n: 4\n? [a, c]\n: 5\n? [a]\n: 6\n")
            == .duplicatedKeys(["<uncovertable>", "<uncovertable>", "<uncovertable>"], mark: YAMLMark(line: 5, column: 3)))
        // A mapping with a key tagged !!value is shown by that key's value.
        #expect(Self.failure("? {!!value k: v}\n: 1\n? {!!value k: v}\n: 2\n") == .duplicatedKeys(["v"], mark: YAMLMark(line: 1, column: 3)))
    }

    @Test("libyaml's errors keep its problem, context and places")
    func libyamlErrors() {
        #expect(Self.failure("a: [1, 2\nb: 3\n") == .parser(
            problem: "did not find expected ',' or ']'", mark: YAMLMark(line: 2, column: 2),
            context: YAMLError.Context(text: "while parsing a flow sequence", mark: YAMLMark(line: 1, column: 4))))
        #expect(Self.failure("a: 'open\n") == .scanner(
            problem: "found unexpected end of stream", mark: YAMLMark(line: 2, column: 1),
            context: YAMLError.Context(text: "while scanning a quoted scalar", mark: YAMLMark(line: 1, column: 4))))
        // Past the end of a text without a final line break, the problem is at the end of its last line.
        #expect(Self.problem("a: [1").hasPrefix("inline.yaml:1:6: YAML syntax: did not find expected ',' or ']' while parsing a flow sequence; "))
    }

    @Test("A character YAML does not allow is a reader error at its byte, located in the text")
    func readerErrors() throws {
        let text = "a: é\n---\n\u{1}\n"
        let error = try #require(Self.failure(text))
        #expect(error == .reader(problem: "control characters are not allowed", offset: 10, value: 1))
        let diagnostic = ScenarioLoader.yamlDiagnostic(error, text: text, file: "x.yaml")
        #expect(diagnostic.description == "x.yaml:3:1: YAML: control characters are not allowed (U+0001)")
        #expect(Self.problem("a: \u{7F}\n") == "inline.yaml:1:4: YAML: control characters are not allowed (U+007F)")
    }

    @Test("The composer measures each event against YAMLLimits as it reads it: 256 levels compose, the 257th is refused where it opens")
    func deepNesting() throws {
        let depth = YAMLLimits.maximumDepth
        var node = try Self.compose(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
        var levels = 1
        while case .sequence(let list) = node, let first = list.first {
            node = first
            levels += 1
        }
        #expect(levels == depth)
        let deeper = try #require(Self.failure("a: " + String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1)))
        // The mapping is the first level: the 256th bracket, at column 3 + 256, opens the 257th.
        #expect(deeper == .limit(YAMLLimits.Violation(line: 1, column: 3 + depth, message: YAMLLimits.depthMessage)))
        // Only the first document is measured: the composer refuses a second one as such.
        let second = try #require(Self.failure("a: 1\n---\n" + String(repeating: "[", count: depth + 1)))
        guard case .composer(let problem, _, _) = second else {
            Issue.record("expected the composer's error, got \(second)")
            return
        }
        #expect(problem == "but found another document")
    }

    @Test("The event parser gives libyaml's events in order, each at its start")
    func events() {
        func describe(_ kind: YAMLEvent.Kind) -> String {
            switch kind {
            case .streamStart: return "stream"
            case .streamEnd: return "/stream"
            case .documentStart: return "document"
            case .documentEnd: return "/document"
            case .alias(let anchor): return "*" + anchor
            case .scalar(let value, let tag, let style, let anchor): return "scalar \(anchor ?? "-") \(tag) \(style) \(value)"
            case .sequenceStart(let anchor, let tag): return "list \(anchor ?? "-") \(tag)"
            case .sequenceEnd: return "/list"
            case .mappingStart(let anchor, let tag): return "mapping \(anchor ?? "-") \(tag)"
            case .mappingEnd: return "/mapping"
            }
        }
        let events = YAMLEventParser.parse("&a x: !t [*a, 'q']\n") { parser -> [String] in
            var events: [String] = []
            while let event = try? parser.next() {
                events.append("\(event.mark) \(describe(event.kind))")
                if case .streamEnd = event.kind { break }
            }
            return events
        }
        #expect(events == [
            "1:1 stream", "1:1 document", "1:1 mapping - ", "1:1 scalar a  plain x", "1:7 list - !t", "1:11 *a",
            "1:15 scalar - \(YAMLNode.Scalar.stringTag) singleQuoted q", "1:18 /list", "2:1 /mapping", "2:1 /document", "2:1 /stream",
        ])
    }
}
