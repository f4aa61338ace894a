/// The mutations the scenario fuzz tests apply to the texts of `ScenarioCorpus`: bytes, lines,
/// indentation, values and keys changed, text inserted, the whole cut or wrapped. The same seed
/// and lists give the same mutations.
public struct ScenarioMutator: Sendable {
    /// Values put where a value was, or after a new key.
    public var scalars: [String]
    /// Keys put on new lines, or in place of a key.
    public var keys: [String]
    /// Text inserted anywhere.
    public var fragments: [String]

    public init(scalars: [String] = Self.standardScalars, keys: [String] = Self.schemaKeys + Self.extraKeys,
                fragments: [String] = Self.standardFragments) {
        self.scalars = scalars
        self.keys = keys
        self.fragments = fragments
    }

    /// Values put where scalars were: other types, extremes, YAML syntax.
    public static let standardScalars: [String] = [
        "0", "-1", "99", "100", "599", "600", "18446744073709551616", "-9223372036854775809", "9223372036854775807",
        "1e999", "-1e999", "1e308", "1e-400", "0.5", "1.5", "-0.0", ".5", "NaN", "nan", ".nan", ".inf", "-.inf", "0x1F", "0o17",
        "", "~", "null", "true", "false", "yes", "[]", "{}", "''", "\"\"", "[1, [2, [3]]]", "{ a: 1 }",
        String(repeating: "x", count: 10_000), String(repeating: "{{", count: 50), "\"\(String(repeating: "é", count: 3000))\"",
        "5s", "-1ms", "1.5s", "0ms", "99999999999h", "1e308ms", "1e308s", "-0s", "ms", "s", "86400001",
        "\"{{now+99999999999999999999s}}\"", "\"{{now-9223372036854775808s}}\"", "\"{{now+315360000s}}\"", "\"{{now}}\"",
        "\"{{\"", "\"{{query.}}\"", "\"{{body.a..b}}\"", "\"{{headers.X}}\"", "\"{{nope}}\"", "\"\\u0000\"", "\"a\\nb\"",
        "*a", "&a x", "&a [*a]", "!!binary aGVsbG8=", "!!str 5", "!!int x", "!custom x",
        "reset", "close", "garbage", "truncate", "truncate-chunked", "content-length-mismatch", "explode",
        "GET /a/{x}/*", "GET /*/x", "BREW /", "GET", "get /lower", "GET /{}", "GET /a b",
        "pass", "(a+)+$", "\"[\"", "\"(?<=a)b\"", "\"\\\\\"", "{ min: 5, max: 1 }", "{ chunks: 0, duration: 1s }",
        "{ chunks: 18446744073709551616, duration: 315360000000 }", "[pass]", "[pass, pass]", "\"\u{202E}\"", "'''", "|", ">-",
    ]

    /// Paths of body files, inside the scenarios folder and out of it.
    public static let fileScalars = ["files/captive-portal.html", "../outside.txt", "/etc/hostname", "files/missing.html"]

    /// Every key of the scenario format, once: file, rule, response, `when` and condition keys.
    public static let schemaKeys: [String] = [
        "endpoint", "rules", "endpoints", "name", "when", "chance", "respond", "cycle",
        "status", "headers", "json", "text", "base64", "file", "contentType", "delay", "hang", "dribble", "fault",
        "query", "body", "path", "malformedBody", "equals", "oneOf", "absent", "present", "empty", "length",
        "minLength", "maxLength", "matches", "prefix", "suffix", "contains", "not",
    ]

    /// Keys of nested values, misspelt keys, headers, YAML's merge key and odd ones.
    public static let extraKeys = ["min", "max", "chunks", "duration", "stauts", "x-extra", "<<", "Content-Length", "Retry-After",
                                   "", "\"\"", "? a", "[k]"]

    /// Text inserted anywhere.
    public static let standardFragments: [String] = [
        "{", "[", "}", "]", ",", ": ", "- ", "? ", "&a ", "*a", "*a ", "!!binary ", "<<: *x", "---\n", "...\n", "\u{FEFF}",
        "\u{0}", "\t", "#", "'", "\"", "|\n", ">\n", "%YAML 1.1\n", "!!str ", "&a [*a]", "\r", "\r\n", "\u{85}", "\u{2028}",
        "*undefined", "&b &c ", "!<tag:yaml.org,2002:str> ", "@", "`", "%", "\\",
    ]

    /// `base` after one to four random mutations.
    public func mutate(_ base: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var bytes = base
        // Mostly one mutation, so that a fair share stays valid and reaches the engine.
        let count = random.below(3) == 0 ? 2 + random.below(3) : 1
        for _ in 0..<count {
            bytes = mutateOnce(bytes, &random)
        }
        return bytes
    }

    private func mutateOnce(_ bytes: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        let newline = UInt8(ascii: "\n")
        var lines = bytes.split(separator: newline, omittingEmptySubsequences: false).map(Array.init)
        func joined() -> [UInt8] { Array(lines.joined(separator: [newline])) }
        let line = random.below(lines.count)
        switch random.below(12) {
        case 0:
            // A byte changed: one bit, or a new value.
            guard !bytes.isEmpty else { return bytes }
            var changed = bytes
            let index = random.below(bytes.count)
            if random.below(2) == 0 {
                changed[index] ^= 1 << UInt8(random.below(8))
            } else {
                changed[index] = UInt8(random.below(256))
            }
            return changed
        case 1:
            lines.remove(at: line)
            if lines.isEmpty { lines = [[]] }
        case 2:
            lines.insert(lines[line], at: line)
        case 3:
            lines.swapAt(line, random.below(lines.count))
        case 4:
            // Indentation: more, less, or a tab.
            let leading = lines[line].prefix(while: { $0 == UInt8(ascii: " ") }).count
            switch random.below(3) {
            case 0: lines[line].insert(contentsOf: Array(repeating: UInt8(ascii: " "), count: 1 + random.below(4)), at: 0)
            case 1: lines[line].removeFirst(min(leading, 1 + random.below(4)))
            default: lines[line].insert(UInt8(ascii: "\t"), at: random.below(leading + 1))
            }
        case 5, 6:
            // A value replaced: what follows a `: ` or a `- `, up to the next , } ] or the line's end.
            var starts: [Int] = []
            for (index, byte) in lines[line].enumerated().dropLast()
            where (byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")) && lines[line][index + 1] == UInt8(ascii: " ") {
                starts.append(index + 2)
            }
            guard !starts.isEmpty else { return bytes }
            let start = random.pick(starts)
            let stops: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]")]
            let end = lines[line][start...].firstIndex(where: { stops.contains($0) }) ?? lines[line].endIndex
            lines[line].replaceSubrange(start..<end, with: Array(random.pick(scalars).utf8))
        case 7:
            // A key, known or not, as a new line indented like a neighbour.
            let indent = lines[line].prefix(while: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "-") })
            let entry = Array(indent) + Array("\(random.pick(keys)): \(random.pick(scalars))".utf8)
            lines.insert(entry, at: random.below(lines.count + 1))
        case 8:
            var changed = bytes
            changed.insert(contentsOf: Array(random.pick(fragments).utf8), at: random.below(bytes.count + 1))
            return changed
        case 9:
            return Array(bytes.prefix(random.below(bytes.count + 1)))
        case 10:
            // A key renamed: the word before a `:` on the line becomes another key.
            guard let colon = lines[line].firstIndex(of: UInt8(ascii: ":")) else { return bytes }
            let start = lines[line][..<colon].lastIndex(where: { !Self.isWordByte($0) }).map { $0 + 1 } ?? 0
            lines[line].replaceSubrange(start..<colon, with: Array(random.pick(keys).utf8))
        default:
            // The whole text wrapped: a BOM, a document marker, a second document, a line from elsewhere.
            switch random.below(4) {
            case 0: return Array("\u{FEFF}".utf8) + bytes
            case 1: return Array("--- ".utf8) + bytes
            case 2: return bytes + Array("\n---\n".utf8) + bytes
            default: lines.insert(lines[random.below(lines.count)], at: random.below(lines.count + 1))
            }
        }
        return joined()
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        byte >= 0x80 || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }
}
