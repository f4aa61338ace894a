import Testing
@testable import MishapEngine

/// A run of `prefix` rules is narrowed by the value's first byte (`FirstByteTable`); these pin
/// that the narrowed run answers exactly as testing every rule in order would.
@Suite struct FirstByteTableTests {
    /// One run's conditions in an order where earlier ones shadow later ones: ASCII prefixes
    /// (two sharing a first byte, one a CR, whose CR LF is one character), the Kelvin sign
    /// (canonically "K") and a precomposed é as prefixes, a suffix, a length, an empty prefix
    /// and a negation, which the table cannot narrow.
    private let conditions: [Condition] = [
        .prefix("server@"), .prefix("s"), .suffix(".com"), .prefix("\u{212A}"), .prefix("K"), .prefix("é"),
        .prefix("e"), .prefix("\r"), .length(min: nil, max: 1), .prefix("zz"), .prefix(""), .not(.prefix("q")),
    ]

    /// Random values over the pieces that make the byte-level answer differ from a naive one:
    /// a decomposed é (ASCII e, then a combining accent), CR LF, the Kelvin sign, an Arabic
    /// prepended mark; nil for an absent value.
    private func values() -> [String?] {
        let pieces = ["a", "s", "e", "K", "q", "z", "\u{212A}", "é", "e\u{301}", "\u{301}", "\r", "\n", "\r\n", "server@", ".com", "\u{600}"]
        var generator = SystemRandomNumberGenerator()
        let random = (0..<400).map { _ in
            (0..<Int.random(in: 0...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
        }
        return [nil, ""] + pieces + random
    }

    @Test func narrowedRunAnswersAsEveryConditionInOrder() throws {
        let table = try #require(FirstByteTable(conditions))
        for value in values() {
            let expected = conditions.indices.first { conditions[$0].holds(for: value) }
            var tested: [Int] = []
            let found = table.forEachCandidate(for: value) { offset -> Int? in
                tested.append(offset)
                return conditions[offset].holds(for: value) ? offset : nil
            }
            #expect(found == expected, "\(value.map { Array($0.unicodeScalars) } ?? [])")
            #expect(tested == tested.sorted(), "offsets out of order for \(String(describing: value))")
            // Values starting with an ASCII byte are tested against fewer conditions.
            if let first = value?.utf8.first, first < 0x80, first != UInt8(ascii: "s") {
                #expect(tested.count < conditions.count || found != nil)
            }
        }
    }

    /// Through an endpoint: the rules become one `tests` step with a table, and each value gets
    /// the status of the first rule whose condition holds.
    @Test func endpointUsesTheTableAndFirstMatchWins() {
        let rules = conditions.indices.map { index in
            Rule(name: "r\(index)", when: [Predicate(conditions: [(.query("name"), conditions[index])])],
                 action: .respond(ResponseTemplate(status: 400 + index, body: Template(literal: ""))))
        } + [Rule(name: "rest", action: .respond(ResponseTemplate(status: 200, body: Template(literal: ""))))]
        let endpoint = Endpoint(method: "GET", path: PathPattern("/x")!, rules: rules)
        guard case .tests(let run)? = endpoint.index.steps.first else {
            Issue.record("expected a tests step first, got \(endpoint.index.steps)")
            return
        }
        #expect(run.table != nil)
        let engine = Engine(endpoints: [endpoint])
        for value in values() {
            let expected = conditions.indices.first { conditions[$0].holds(for: value) }.map { 400 + $0 } ?? 200
            let request = Request(method: "GET", path: "/x", query: value.map { [Field("name", $0)] } ?? [])
            #expect(engine.respond(to: request).status == expected, "\(value.map { Array($0.unicodeScalars) } ?? [])")
        }
        // Forcing a rule still starts after it, inside the narrowed run.
        let forced = Request(method: "GET", path: "/x", query: [Field("name", "server@x")], headers: [Field("X-Mishap-Rule", "r0")])
        #expect(engine.respond(to: forced).status == 400)
        let afterForced = Request(method: "GET", path: "/x", query: [Field("name", "sx")], headers: [Field("X-Mishap-Rule", "r2")])
        #expect(engine.respond(to: afterForced).status == 402)
    }

    /// Fewer than four ASCII prefixes are tested one by one: no table.
    @Test func fewPrefixesMakeNoTable() {
        #expect(FirstByteTable([.prefix("a"), .prefix("b"), .prefix("c"), .suffix("d"), .prefix("é")]) == nil)
        #expect(FirstByteTable([.prefix("a"), .prefix("b"), .prefix("c"), .prefix("d")]) != nil)
    }
}
