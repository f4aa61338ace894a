import MishapTestSupport
import Testing
@testable import MishapPattern

@Suite struct PatternTests {
    // MARK: Agreement with Swift's Regex

    /// Patterns as scenario authors write them.
    static let realisticPatterns = [
        #"^[a-z0-9_]{3,16}$"#, #"^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$"#, #"^\S+@\S+\.\S+$"#,
        "@", "^admin$", "^(admin|superuser)$", "(?i)^admin$", "(?i)maintenance", #"^\d{4}$"#, #"^\d+$"#,
        #"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"#, #"^Bearer [A-Za-z0-9._~+/-]+=*$"#,
        #"^[A-Za-z0-9_-]{10,}$"#, #"\s"#, #"^\s*$"#, #"^\w+$"#, #"\W"#, "^.{4}$", "^.{1,3}$", "^.*$", ".", "^$", "",
        #"\bjohn\b"#, #"\Bohn"#, #"\b"#, #"\B"#, #"^\b.*\b$"#, #"^(?:[a-z]+\.)*[a-z]+$"#, "colou?r", "^[^@]+$",
        #"[^\x00-\x7F]"#, #"\u{1F600}"#, #"\u{e9}"#, "é", "e\u{301}", #"e\u{301}"#, "(?i)É", "^[à-ÿ]+$", "[à-ÿ]",
        "(?i)[a-z]+", "(?i)^[a-z]+$", #"^\d{3}-\d{3}-\d{4}$"#, #"^\+?[0-9 ()-]{7,}$"#, "(?m)^b", "(?m)a$", "(?s)a.b",
        "a.b", #"\Z"#, #"^ab\Z"#, #"b\z"#, #"\Ab"#, "(?x) ^ [a-z]+ # a comment\n $", #"\h"#, #"\v"#, #"\D"#, #"\H"#,
        #"\V"#, #"[\w.-]+$"#, #"[\[\]]"#, #"\.\*\+"#, #"\t|\n|\r"#, #"\r\n"#, "(?i:ADMIN)|root", "(?i)ß", "(?i)ǆ",
        "(?<user>[a-z]+)@(?<host>[a-z.]+)", "a{0}b", "a{2,}", "a{,2}b", "x*", "(a|b)*c", "(|a)b", ".*?x", "^a+?$",
        #"^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$"#, #"[\d\s]"#, #"[^\d\s]"#,
        #"[\D]"#, "[-a]", "[a-]", "[a-c-e]", #"\x41"#, #"\x{1F600}"#, #"\u00e9"#, #"\0"#, #"\e"#, "a{", "x{a}",
        "}", "]", "(?i)[^a-z]", "(?i)[é]", "(?i)[à-ÿ]", "[à-ÿa-z]", "(?i)[k-l]", "^👨‍👩‍👧", "👨‍👩‍👧$", "😀+",
        #"(?i)\w+@\w+"#, "^(a|ab)(c|bcd)(d*)$", "(?m)^$", "(?s).+", "^[^a]*$", "(?i)SS", "[😀-😂]",
        "(?i)a(?-i)b", "a(?i)b|c", "(?i:a|b)c", "(?#comment)a", "(?:)", "()", "a||b", #"\Qa.*+\E"#, #"[\Q]-\E]"#,
        "(?x)[a - c] b", "^a{1, 2}$", "[a\\u{301}]", #"\r(?m)\n"#, #"a(?s)\u{301}"#, #"[^\r]"#, #"^[^\x00-\x7F]+$"#,
    ]

    /// Values as clients send them, and awkward ones.
    static let realisticSubjects = [
        "", "a", "b", "ab", "admin", "Admin", "ADMIN", "superuser", "john", "johndoe", "john doe", "john_doe",
        "jo", "j.doe", "maintenance", "MAINTENANCE!", "servererror", "john@doe.com", "John.Doe+tag@example.co.uk",
        "bad@", "@bad.com", "a@b.c", "1234", "12345", "٣٤٥٦", "½", "jörg", "jo\u{308}rg", "é", "e\u{301}", "É",
        "👨‍👩‍👧abc", "👨‍👩‍👧", "😀", "😀😀", "🇫🇷", "can't", "a.b", "hello world", " ", "\t", "\n", "a\n", "ab\n",
        "a\nb", "a\r\nb", "\r\n", "ab\r\n", "b\n\n", "\u{2028}", "\u{85}", "\u{A0}", "Bearer abc.def-ghi==",
        "Bearer ", "550e8400-e29b-41d4-a716-446655440000", "c7d83mdla_3ms", "192.168.0.1", "256.1.1.1", "colour",
        "color", "ǅ", "ǆ", "ß", "ẞ", "SS", "ss", "İ", "ı", "Ω", "日本語", "x*y", "[]", "a.*+", "--", "(555) 123-4567",
        "555-123-4567", "\u{1B}", "\0", "A", "abc", "abcd", "aaa", "acd", "abbcd", "a{", "x{a}", "}", "]", "K", "k",
        "\u{1}", "c\u{327}", "a\u{301}", "ab\u{301}", "😂", "xyz", "the cat sat", "_", "a_b", "3.14", "ﬀ",
    ]

    @Test(.timeLimit(.minutes(2)))
    func agreesWithSwiftRegexOnRealisticPatterns() throws {
        var mismatches: [String] = []
        for source in Self.realisticPatterns {
            let ours = try Pattern(source)
            let theirs = try Regex(source)
            for subject in Self.realisticSubjects where ours.matches(subject) != subject.contains(theirs) {
                mismatches.append("\(source.debugDescription) on \(subject.debugDescription): Regex says \(subject.contains(theirs))")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) disagreements:\n\(mismatches.prefix(30).joined(separator: "\n"))")
    }

    @Test(.timeLimit(.minutes(3)))
    func agreesWithSwiftRegexOnRandomPatterns() throws {
        var random = SeededRandom(seed: 0x6D69_7368_6170)
        var mismatches: [String] = []
        var pairs = 0
        while pairs < 12_000 {
            let source = RandomPattern.make(&random)
            // Random members can make an invalid class such as [é-b]; Regex is the judge.
            guard let theirs = try? Regex(source) else { continue }
            let ours: Pattern
            do {
                ours = try Pattern(source)
            } catch {
                mismatches.append("\(source.debugDescription) does not compile: \(error)")
                continue
            }
            for _ in 0..<8 {
                let subject = RandomPattern.subject(&random)
                pairs += 1
                if ours.matches(subject) != subject.contains(theirs) {
                    mismatches.append("\(source.debugDescription) on \(subject.debugDescription): Regex says \(subject.contains(theirs))")
                }
            }
        }
        #expect(pairs == 12_000)
        #expect(mismatches.isEmpty, "\(mismatches.count) disagreements:\n\(mismatches.prefix(30).joined(separator: "\n"))")
    }

    // MARK: Hostile input

    @Test(.timeLimit(.minutes(1)))
    func catastrophicPatternsStayLinear() throws {
        let many = String(repeating: "a", count: 10_000)
        let cases: [(pattern: String, subject: String, matches: Bool)] = [
            ("(a+)+$", many + "!", false),
            ("^(a+)+$", many + "!", false),
            ("(a+)+$", many, true),
            ("(a|aa)+$", many + "!", false),
            ("^(a|aa)+$", many, true),
            ("(a|a)*b", many, false),
            ("(a|a)*b", many + "b", true),
            ("(.*a){20}", String(repeating: String(repeating: "x", count: 500) + "a", count: 19) + "x", false),
            ("(.*a){20}", String(repeating: String(repeating: "x", count: 500) + "a", count: 20), true),
            (#"(\w+\s?)+$"#, many + "!", false),
            (#"^(\w+\s?)+$"#, String(repeating: "ab ", count: 3_333), true),
            ("a*a*a*a*a*a*a*b", many, false),
            ("a*a*a*a*a*a*a*b", many + "b", true),
            ("^(([a-z])+.)+[A-Z]([a-z])+$", many + "!", false),
            ("^(([a-z])+.)+[A-Z]([a-z])+$", many + "Ab", true),
            ("(x+x+)+y", String(repeating: "x", count: 10_000), false),
            (#"^(\d+)*$"#, String(repeating: "1", count: 10_000) + "a", false),
        ]
        let clock = ContinuousClock()
        for (pattern, subject, expected) in cases {
            let compiled = try Pattern(pattern)
            var result = false
            let elapsed = clock.measure { result = compiled.matches(subject) }
            #expect(result == expected, "\(pattern)")
            // Milliseconds in fact; the bound only catches a return to exponential time.
            #expect(elapsed < .seconds(10), "\(pattern) took \(elapsed)")
        }
    }

    // MARK: Semantics

    @Test func matchesCharactersLikeStringCount() throws {
        #expect(try Pattern("^.{4}$").matches("👨‍👩‍👧abc"))
        #expect(try Pattern("^.$").matches("e\u{301}"))
        #expect(try !Pattern("^e").matches("e\u{301}"))
        #expect(try Pattern("^é$").matches("e\u{301}"))
        #expect(try Pattern(#"^e\u{301}$"#).matches("é"))
        // CR-LF is one character, and a newline.
        #expect(try Pattern(#"^\r\n$"#).matches("\r\n"))
        #expect(try !Pattern(#"\n"#).matches("\r\n"))
        #expect(try !Pattern(".").matches("\r\n"))
        #expect(try Pattern("(?s)^.$").matches("\r\n"))
    }

    @Test func anchorsFollowSwiftRegex() throws {
        #expect(try !Pattern("a$").matches("a\n"))
        #expect(try Pattern(#"a\Z"#).matches("a\n"))
        #expect(try Pattern(#"a\Z"#).matches("a\r\n"))
        #expect(try !Pattern(#"a\Z"#).matches("a\n\n"))
        #expect(try !Pattern(#"a\z"#).matches("a\n"))
        #expect(try !Pattern("^b").matches("a\nb"))
        #expect(try Pattern("(?m)^b").matches("a\nb"))
        #expect(try Pattern("(?m)a$").matches("a\r\nb"))
        // Word boundaries are Unicode's (UAX #29): "can't" and "3.14" are single words.
        #expect(try !Pattern(#"\bt"#).matches("can't"))
        #expect(try !Pattern(#"3\b"#).matches("3.14"))
        #expect(try Pattern(#"\bjohn\b"#).matches("hi john!"))
        #expect(try !Pattern(#"\bjohn\b"#).matches("johnny"))
    }

    @Test func classesAreUnicodeAware() throws {
        #expect(try Pattern(#"^\d+$"#).matches("٣٤"))
        #expect(try Pattern(#"^\w+$"#).matches("jörg_1"))
        #expect(try !Pattern(#"\w"#).matches("😀"))
        #expect(try Pattern(#"\s"#).matches("\u{A0}"))
        #expect(try Pattern("^[à-ÿ]$").matches("e\u{301}"))
        #expect(try !Pattern("^[a-z]$").matches("é"))
        #expect(try Pattern("(?i)^[a-z]+$").matches("AdMin"))
        #expect(try Pattern("(?i)^É$").matches("é"))
        #expect(try Pattern("^(?i:a)b$").matches("Ab"))
        #expect(try !Pattern("^(?i:a)b$").matches("AB"))
    }

    @Test func isSafeToShareAcrossThreads() async throws {
        let pattern = try Pattern(#"^[a-z0-9_]{3,16}$"#)
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask { pattern.matches(index.isMultiple(of: 2) ? "johndoe_\(index)" : "No!\(index)") }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.filter { $0 }.count == 32)
    }

    // MARK: Refusals

    @Test(arguments: [
        (#"(a+)x\1"#, #"unsupported: backreferences (\1) can make matching take exponential time; at offset 5"#),
        (#"(?<n>a)\k<n>"#, #"backreferences (\k<n>)"#),
        ("(?P<n>a)(?P=n)", "backreferences ((?P=n))"),
        ("a(?=b)", "unsupported: lookahead '(?='"),
        ("a(?!b)", "lookahead '(?!'"),
        ("(?<=a)b", "lookbehind '(?<='"),
        ("(?<!a)b", "lookbehind '(?<!'"),
        ("(?>a+)b", "atomic groups '(?>'"),
        ("a*+b", "unsupported: possessive quantifiers '*+' (needs backtracking; Mishap matches in linear time); at offset 1"),
        ("a{2,3}+", "possessive quantifiers '{2,3}+'"),
        ("(?(1)a|b)", "conditionals"),
        ("(?R)", "recursion '(?R'"),
        ("(a)(?1)", "recursion '(?1'"),
        ("(?&name)", "recursion"),
        ("(*FAIL)", "backtracking verbs"),
        (#"\q"#, #"unknown escape '\q'; at offset 0"#),
        (#"a\p{L}"#, "Unicode property classes"),
        (#"\X"#, #"the escape '\X'"#),
        ("a(b", "missing ')' to close the group; at offset 1"),
        ("a)b", "unbalanced ')': no group is open; at offset 1"),
        ("[ab", "missing ']' to close the character class; at offset 0"),
        ("[]a]", "cannot start with ']'"),
        ("[z-a]", "invalid range 'z-a': 'z' comes after 'a'; at offset 1"),
        (#"[\d-z]"#, "invalid range bound"),
        ("a{3,2}", "invalid quantifier '{3,2}': the minimum is larger than the maximum; at offset 1"),
        ("*a", "quantifier '*' has nothing to repeat; at offset 0"),
        ("a|+", "quantifier '+' has nothing to repeat; at offset 2"),
        ("({2})", "quantifier '{2}' has nothing to repeat"),
        ("a**", "quantifier '*' follows another quantifier"),
        ("^*", "'^' is an anchor and cannot be repeated"),
        (#"\b+"#, #"'\b' is an anchor"#),
        (#"\Qa.b\E+"#, "is quoted text"),
        ("(a{1000}){1000}", "pattern too large"),
        ("a{10001}", "repeats more than 10000 times"),
        ("[[:alpha:]]", "POSIX classes"),
        ("[a&&b]", "the class operator '&&'"),
        ("(?w)a", "unsupported: the flag 'w'"),
        ("(?", "incomplete group"),
        (#"\"#, #"lone '\'"#),
        (#"\x"#, "hexadecimal digits"),
        (#"\u{D800}"#, "is not a Unicode scalar value"),
        (#"\u12"#, "4 hexadecimal digits"),
        ("(?<1a>x)", "cannot start with a digit"),
        ("(\u{301}x)", "followed by a combining mark"),
        (String(repeating: "(", count: 300) + String(repeating: ")", count: 300), "groups nest more than 200 deep"),
    ])
    func refusesWithAClearMessage(source: String, message: String) {
        do {
            _ = try Pattern(source)
            Issue.record("\(source.debugDescription) compiled")
        } catch let error as PatternError {
            #expect(error.description.contains(message), "\(error)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test(arguments: [
        "", "()", "(?:)", "a||b", "a{", "a{1", "x{a}", "{", "}", "]", "a{,}", "[a-]", "[-a]", "[a\\-z]",
        "(?i)(?-i)a", "(?i-s:a)", "(?^i)a", "(?n)a", "(?U)a*", "(?x) a b # c", "(?#note)", "(?<ä>x)",
        "(?'name'x)", "(?P<name>x)", "a{0}", "a{0,0}", "(?:a{100}){99}", #"\0123"#, #"[\b]"#, #"\/"#,
    ])
    func acceptsEdgeCases(source: String) {
        #expect(throws: Never.self) { try Pattern(source) }
    }

    @Test func errorDescriptionNamesTheOffset() {
        #expect(PatternError("unbalanced ')'", at: 3).description == "unbalanced ')'; at offset 3")
        #expect(PatternError("pattern too large", at: nil).description == "pattern too large")
    }
}

// MARK: Random patterns

/// Small patterns in the supported syntax over a small alphabet, without nested quantifiers (so
/// Swift's backtracking engine stays fast on them), and subjects over the same alphabet.
enum RandomPattern {
    static let literals = ["a", "b", "c", "A", "B", "-", #"\."#, " ", "é", "1", "_", #"\n"#, "😀", "ß", #"\u{301}"#]
    static let escapes = [#"\d"#, #"\w"#, #"\s"#, #"\D"#, #"\W"#, #"\S"#, #"\h"#, #"\v"#]
    static let classMembers = ["a", "b", "c", "A", "é", "-", "_", " ", "a-c", "A-Z", "0-9", "b-e", "à-ÿ", #"\d"#, #"\w"#,
                               #"\s"#, #"\n"#, "😀"]
    static let anchors = ["^", "$", #"\b"#, #"\B"#, #"\A"#, #"\z"#, #"\Z"#]
    static let quantifiers = ["*", "+", "?", "{2}", "{1,}", "{0,2}", "{1,3}", "*?", "+?", "??", "{2,}?"]
    static let subjectPieces = ["a", "b", "c", "A", "B", "-", ".", " ", "é", "e\u{301}", "1", "_", "\n", "\r\n", "😀", "ß",
                                "SS", "٣", "É", "x"]

    static func make(_ random: inout SeededRandom) -> String {
        var source = random.remainder(6) == 0 ? "(?i)" : ""
        source += sequence(&random, depth: 0)
        if random.remainder(4) == 0 { source += "|" + sequence(&random, depth: 0) }
        return source
    }

    static func subject(_ random: inout SeededRandom) -> String {
        (0..<random.remainder(9)).map { _ in random.pickByRemainder(subjectPieces) }.joined()
    }

    private static func sequence(_ random: inout SeededRandom, depth: Int) -> String {
        var source = ""
        for _ in 0..<(1 + random.remainder(4)) {
            switch random.remainder(10) {
            case 0 where depth == 0:
                // A group of unquantified atoms, itself maybe quantified.
                var inner = (0..<(1 + random.remainder(3))).map { _ in atom(&random) }.joined()
                if random.remainder(2) == 0 { inner += "|" + atom(&random) }
                source += random.pickByRemainder(["(", "(?:", "(?i:"]) + inner + ")" + quantifier(&random)
            case 1:
                source += random.pickByRemainder(anchors)
            default:
                source += atom(&random) + quantifier(&random)
            }
        }
        return source
    }

    private static func quantifier(_ random: inout SeededRandom) -> String {
        random.remainder(3) == 0 ? random.pickByRemainder(quantifiers) : ""
    }

    private static func atom(_ random: inout SeededRandom) -> String {
        switch random.remainder(8) {
        case 0: return "."
        case 1: return random.pickByRemainder(escapes)
        case 2:
            let members = (0..<(1 + random.remainder(3))).map { _ in random.pickByRemainder(classMembers) }.joined()
            return "[" + (random.remainder(3) == 0 ? "^" : "") + members + "]"
        default: return random.pickByRemainder(literals)
        }
    }
}
