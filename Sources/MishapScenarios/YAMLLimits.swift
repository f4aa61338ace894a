/// Limits a scenario file must stay within before it is composed into a tree, so that no file,
/// however written, can exhaust the stack, the memory or the time of whoever loads it. They
/// are measured on libyaml's events as they are read (`Tracker`), before the composer acts on
/// each, in the one pass that composes the tree.
///
/// Composing and compiling are linear in a file's size except in two ways, both bounded here:
/// nesting (comparing keys while composing, the compiler and freeing the tree recurse once per
/// level) and aliases (`*name` stands for the whole node anchored as `&name`, so ten levels of
/// ten aliases each stand for ten billion values, although the tree shares them: every walk
/// over it visits them all, and so does hashing a mapping's keys while composing).
enum YAMLLimits {
    /// The largest scenario file read, in bytes.
    static let maximumFileSize = 16 * 1024 * 1024
    /// The deepest nesting of lists and mappings.
    static let maximumDepth = 256
    /// How many values aliases may repeat in one file, counted at their full size, plus the
    /// values of keys that are lists or mappings (each is hashed whole while composing).
    static let maximumRepeatedValues = 1_000_000

    static let depthMessage = "nesting deeper than \(maximumDepth) levels of lists and mappings"

    /// A limit exceeded, or a character YAML does not allow, with its 1-based place.
    struct Violation: Equatable {
        var line: Int
        var column: Int
        var message: String
    }

    /// The size limit, checked before a text is parsed at all.
    static func sizeViolation(_ text: String) -> Violation? {
        let size = text.utf8.count
        guard size > maximumFileSize else { return nil }
        return Violation(line: 1, column: 1,
                         message: "the file is \(size) bytes; a scenario file may be at most \(maximumFileSize / (1024 * 1024)) MiB (\(maximumFileSize) bytes)")
    }

    /// A character YAML does not allow, as a violation at its place: libyaml's words and the
    /// character's code point.
    static func readerViolation(problem: String, offset: Int, value: Int32, in text: String) -> Violation {
        let place = location(ofByte: offset, in: text)
        let character = value >= 0 ? " (U+\(hex(value)))" : ""
        return Violation(line: place.line, column: place.column, message: "YAML: \(problem.isEmpty ? "unreadable text" : problem)\(character)")
    }

    /// A collection being read: what the running count was when it started, its anchor, how
    /// many nodes it holds so far (a mapping alternates keys and values), and how deeply nested
    /// the deepest of them is.
    private struct Open {
        var start: Int
        var anchor: String?
        var isMapping: Bool
        var children = 0
        var height = 0
    }

    /// What an anchor stands for: how many nodes, and how many levels of collections.
    private struct Anchored {
        var size: Int
        var height: Int
    }

    /// The limits measured on a text's events as they are read, one at a time, before whoever
    /// reads them acts on them: the event parser feeds it each event (`YAMLEventParser.limits`),
    /// so the composer never holds an event that breaks a limit, and the text is parsed once.
    /// Only the first document is measured; a second one is the composer's to refuse.
    struct Tracker {
        private var stack: [Open] = []
        /// Nodes of the document as composed, each alias counted at the size of what it stands for.
        private var composed = 0
        /// Nodes repeated by aliases, plus nodes of keys that are lists or mappings.
        private var repeated = 0
        private var anchored: [String: Anchored] = [:]
        private var ended = false

        /// The limit `event` goes beyond, or nil.
        mutating func check(_ event: YAMLEvent) -> Violation? {
            guard !ended else { return nil }
            let line = event.mark.line
            let column = event.mark.column
            switch event.kind {
            case .scalar(_, _, _, let anchor):
                composed += 1
                if !finish(size: 1, height: 0, anchor: anchor) {
                    return keyViolation(line: line, column: column)
                }
            case .alias(let name):
                // An undefined alias is the composer's to report.
                let target = anchored[name] ?? Anchored(size: 1, height: 0)
                composed += target.size
                repeated += target.size
                if repeated > maximumRepeatedValues {
                    return Violation(line: line, column: column,
                                     message: "alias '*\(shown(name))' brings the values repeated by aliases past \(maximumRepeatedValues); a scenario file may repeat at most \(maximumRepeatedValues) through aliases")
                }
                // What an alias stands for is nested where the alias is: walks over the tree go
                // that deep, although the text does not.
                if stack.count + target.height > maximumDepth {
                    return Violation(line: line, column: column,
                                     message: "alias '*\(shown(name))' makes the \(depthMessage)")
                }
                if !finish(size: target.size, height: target.height, anchor: nil) {
                    return keyViolation(line: line, column: column)
                }
            case .sequenceStart(let anchor, _), .mappingStart(let anchor, _):
                guard stack.count < maximumDepth else {
                    return Violation(line: line, column: column, message: depthMessage)
                }
                let isMapping: Bool
                if case .mappingStart = event.kind { isMapping = true } else { isMapping = false }
                stack.append(Open(start: composed, anchor: anchor, isMapping: isMapping))
                composed += 1
            case .sequenceEnd, .mappingEnd:
                // An end without a start is the composer's to report.
                guard let open = stack.popLast() else { return nil }
                if !finish(size: composed - open.start, height: open.height + 1, anchor: open.anchor) {
                    return keyViolation(line: line, column: column)
                }
            case .documentEnd, .streamEnd:
                ended = true
            case .streamStart, .documentStart:
                break
            }
            return nil
        }

        /// Records a complete node: what its anchor stands for, and its cost when it is a key.
        private mutating func finish(size: Int, height: Int, anchor: String?) -> Bool {
            if let anchor { anchored[anchor] = Anchored(size: size, height: height) }
            guard let parent = stack.indices.last else { return true }
            let isKey = stack[parent].isMapping && stack[parent].children % 2 == 0
            stack[parent].children += 1
            stack[parent].height = max(stack[parent].height, height)
            if isKey && size > 1 {
                repeated += size
                return repeated <= maximumRepeatedValues
            }
            return true
        }
    }

    private static func keyViolation(line: Int, column: Int) -> Violation {
        Violation(line: line, column: column,
                  message: "keys that are lists or mappings hold more than \(maximumRepeatedValues) values in all; keys in scenario files are names")
    }

    /// The 1-based line and column (in Unicode scalars) of the byte at `offset`, lines broken
    /// as libyaml breaks them: at `\n`, `\r\n`, `\r`, NEL and the Unicode line and paragraph
    /// separators.
    static func location(ofByte offset: Int, in text: String) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        var previous: Unicode.Scalar?
        var consumed = 0
        for scalar in text.unicodeScalars {
            guard consumed < offset else { break }
            consumed += UTF8.width(scalar)
            switch scalar {
            case "\n" where previous == "\r":
                break
            case "\n", "\r", "\u{85}", "\u{2028}", "\u{2029}":
                line += 1
                column = 1
            default:
                column += 1
            }
            previous = scalar
        }
        return (line, column)
    }

    /// Where `text` ends: its last line, and the column just past that line's last character.
    static func end(of text: String) -> (line: Int, column: Int) {
        location(ofByte: text.utf8.count, in: text)
    }

    private static func hex(_ value: Int32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// `text` as a message quotes it: cut to `limit` characters, and on one line.
    static func shown(_ text: String, limit: Int = 80) -> String {
        let cut = text.utf8.count > limit ? String(text.prefix(limit)) + "…" : text
        return oneLine(cut)
    }

    /// `text` with line breaks and other control characters written as escapes (`\n`), so a
    /// problem stays on the one line `file:line:column: message` gives it.
    static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where isControl(scalar): result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// C0 and C1 controls, and the Unicode line and paragraph separators.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
