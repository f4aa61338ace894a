import Testing
@testable import MishapEngine

@Suite struct ConditionTests {
    @Test func equalityAndOneOf() {
        #expect(Condition.equals("admin").holds(for: "admin"))
        #expect(!Condition.equals("admin").holds(for: "Admin"))
        #expect(!Condition.equals("admin").holds(for: nil))
        #expect(Condition.oneOf(["admin", "superuser"]).holds(for: "superuser"))
        #expect(!Condition.oneOf(["admin", "superuser"]).holds(for: "root"))
    }

    @Test func presenceAndEmptiness() {
        #expect(Condition.absent.holds(for: nil))
        #expect(!Condition.absent.holds(for: ""))
        #expect(Condition.present.holds(for: ""))
        #expect(Condition.empty.holds(for: ""))
        #expect(!Condition.empty.holds(for: nil))
        #expect(!Condition.empty.holds(for: "x"))
    }

    @Test func lengthCountsCharactersAsSwiftDoes() {
        let atMostThree = Condition.length(min: nil, max: 3)
        #expect(atMostThree.holds(for: "abc"))
        #expect(!atMostThree.holds(for: "abcd"))
        // Four characters, five bytes.
        #expect(!atMostThree.holds(for: "jörg"))
        // One grapheme cluster made of five scalars.
        #expect(atMostThree.holds(for: "👨‍👩‍👧"))
        #expect(atMostThree.holds(for: "e\u{301}e\u{301}e\u{301}"))
        #expect(!atMostThree.holds(for: nil))
        #expect(Condition.length(min: 2, max: 2).holds(for: "ab"))
        #expect(!Condition.length(min: 2, max: nil).holds(for: "a"))
        // Printable ASCII is counted by bytes; CR LF is one character, as Swift counts it.
        #expect(Condition.length(min: 3, max: 3).holds(for: "a\r\nb"))
        #expect(Condition.length(min: 4, max: 4).holds(for: "a\tbc"))
    }

    /// `prefix` and `suffix` decided over bytes give `String`'s answers: random texts over
    /// ASCII letters, CR and LF (one character together), a combining accent, the Kelvin sign
    /// (canonically "K") and an Arabic prepended mark, every prefix and suffix of each against
    /// every other text.
    @Test func bytewisePrefixAndSuffixAgreeWithString() {
        let pieces = ["a", "b", "K", "\r", "\n", "\r\n", "\u{301}", "\u{212A}", "\u{600}", "é", "e"]
        var generator = SystemRandomNumberGenerator()
        let texts = (0..<60).map { _ in
            (0..<Int.random(in: 0...5, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
        }
        for value in texts {
            for affix in texts + Array(value.utf8.indices.compactMap { String(value.utf8[..<$0]) }) {
                #expect(Condition.prefix(affix).holds(for: value) == value.hasPrefix(affix), "\(Array(value.unicodeScalars)) \(Array(affix.unicodeScalars))")
                #expect(Condition.suffix(affix).holds(for: value) == value.hasSuffix(affix), "\(Array(value.unicodeScalars)) \(Array(affix.unicodeScalars))")
            }
        }
        #expect(!Condition.prefix("a\r").holds(for: "a\r\nb"))
        #expect(!Condition.suffix("\nb").holds(for: "a\r\nb"))
        #expect(!Condition.prefix("cafe").holds(for: "cafe\u{301}"))
        #expect(Condition.prefix("K").holds(for: "\u{212A}x") == "\u{212A}x".hasPrefix("K"))
    }

    /// `contains` decided over bytes gives `String`'s answer: random texts as above, each
    /// against every other text and every piece. The reference is `firstRange(of:)`, the
    /// standard library's character search behind `contains` in the engine: here, where
    /// Foundation is visible through Testing, `contains` would be Foundation's UTF-16 search.
    @Test func bytewiseContainsAgreesWithString() {
        let pieces = ["a", "b", "@", "K", "\r", "\n", "\r\n", "\u{301}", "\u{212A}", "\u{600}", "é", "e"]
        var generator = SystemRandomNumberGenerator()
        let texts = (0..<80).map { _ in
            (0..<Int.random(in: 0...6, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
        }
        for value in texts {
            for part in texts + pieces {
                #expect(Condition.contains(part).holds(for: value) == (value.firstRange(of: part) != nil), "\(Array(value.unicodeScalars)) \(Array(part.unicodeScalars))")
            }
        }
        #expect(Condition.contains("@").holds(for: "john@doe.com"))
        #expect(!Condition.contains("@").holds(for: "john.doe.com"))
        #expect(Condition.contains("doe.com").holds(for: "john@doe.com"))
        #expect(!Condition.contains("doe.comx").holds(for: "john@doe.com"))
        #expect(!Condition.contains("\r").holds(for: "a\r\nb"))
        #expect(Condition.contains("e").holds(for: "bee") && !Condition.contains("e").holds(for: "be\u{301}"))
        #expect(Condition.contains("K").holds(for: "a\u{212A}b") == ("a\u{212A}b".firstRange(of: "K") != nil))
        #expect(Condition.contains("").holds(for: "abc"))
    }

    @Test func textTests() throws {
        #expect(Condition.prefix("servererror@").holds(for: "servererror@example.com"))
        #expect(!Condition.prefix("servererror@").holds(for: "x-servererror@example.com"))
        #expect(Condition.suffix(".com").holds(for: "a@b.com"))
        #expect(Condition.contains("@").holds(for: "a@b"))
        let digits = Condition.matches(try Pattern("^[0-9]+$"))
        #expect(digits.holds(for: "12345"))
        #expect(!digits.holds(for: "12a45"))
        #expect(Condition.matches(try Pattern("b+")).holds(for: "abbbc"))
        #expect(throws: (any Error).self) { try Pattern("a(") }
    }

    @Test func negationAndConjunction() {
        let noAt = Condition.not(.contains("@"))
        #expect(noAt.holds(for: "john.doe.com"))
        #expect(!noAt.holds(for: "john@doe.com"))
        // An absent value fails every test, so it passes their negation.
        #expect(noAt.holds(for: nil))
        let both = Condition.all([.prefix("a"), .suffix("z")])
        #expect(both.holds(for: "abcz"))
        #expect(!both.holds(for: "abc"))
    }

    /// The rule summaries quote a value unless it is letters, digits and `@._-!`: decided byte
    /// by byte for ASCII, by each scalar's Unicode properties otherwise, with the same answers.
    @Test func summariesQuoteExactlyWhatTheUnicodeRuleQuotes() {
        func byProperties(_ value: String) -> Bool {
            !value.isEmpty && value.unicodeScalars.allSatisfy {
                ($0.properties.isAlphabetic || $0.properties.numericType != nil || "@._-!".unicodeScalars.contains($0)) && $0 != " "
            }
        }
        var values = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        values += ["", "john@doe.com", "a b", "maintenance", "v1.2-beta_3!", "é", "café", "ǅ", "٣", "Ⅻ", "\u{0301}", "a\u{0301}", "日本", "x\u{200B}"]
        for value in values {
            #expect(Condition.isPlain(value) == byProperties(value), "\(Array(value.unicodeScalars))")
        }
        #expect(Condition.equals("someone").summary == "= someone")
        #expect(Condition.equals("some one").summary == "= \"some one\"")
    }

    /// A `when` in brief, as `mishap routes` and the unreachable-rule warnings show it.
    @Test func predicateSummariesJoinTheirTestsWithAnd() {
        #expect(Predicate.always.summary == "(always)")
        #expect(Predicate(malformedBody: false).summary == "well-formed body")
        let predicate = Predicate(conditions: [(.query("userName"), .equals("someone")), (.body(["email"]), .prefix("locked@"))],
                                  malformedBody: true)
        #expect(predicate.summary == "query.userName = someone and body.email prefix locked@ and malformed body")
    }
}
