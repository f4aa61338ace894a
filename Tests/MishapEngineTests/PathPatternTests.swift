import MishapTestSupport
import Testing
@testable import MishapEngine

@Suite struct PathPatternTests {
    @Test func literalPaths() throws {
        let pattern = try #require(PathPattern("/isUserNameAvailable"))
        #expect(pattern.isLiteral)
        #expect(pattern.match("/isUserNameAvailable") == [])
        #expect(pattern.match("/isUserNameAvailable/x") == nil)
        #expect(pattern.match("/other") == nil)
    }

    @Test func parametersCaptureOneSegment() throws {
        let pattern = try #require(PathPattern("/users/{id}/orders/{order}"))
        #expect(!pattern.isLiteral)
        #expect(pattern.parameterNames == ["id", "order"])
        #expect(pattern.match("/users/42/orders/7") == [Field("id", "42"), Field("order", "7")])
        #expect(pattern.match("/users//orders/7") == nil)
        #expect(pattern.match("/users/42/orders") == nil)
    }

    @Test func trailingWildcardMatchesTheRest() throws {
        let pattern = try #require(PathPattern("/static/*"))
        #expect(pattern.match("/static/a/b/c.css") == [])
        #expect(pattern.match("/static/") == [])
        #expect(pattern.match("/other/a") == nil)
    }

    /// Splitting by bytes gives the segments splitting by Characters gives.
    @Test func partsAreTheSegmentsAfterTheFirstSlash() {
        for path in ["", "a", "/", "//", "/a", "/a/", "/a//b/", "a/b", "/é/ü/x", "/e\u{301}/👨‍👩‍👧/", "/%2F/a b"] {
            #expect(PathPattern.parts(of: path) == Array(path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()), "\(path)")
        }
    }

    /// Literal segments compare bytes first, and String's way (canonically equivalent) when the
    /// bytes differ: a precomposed é in the pattern matches a decomposed one in the path.
    @Test func literalSegmentsCompareAsStrings() {
        let pattern = PathPattern("/caf\u{E9}/{id}")!
        #expect(pattern.match("/caf\u{E9}/1") == [Field("id", "1")])
        #expect(pattern.match("/cafe\u{301}/1") == [Field("id", "1")])
        #expect(pattern.match("/cafe/1") == nil)
        #expect(pattern.match("/caf\u{E9}x/1") == nil)
    }

    @Test func rejectsNonPaths() {
        #expect(PathPattern("users") == nil)
        #expect(PathPattern("/a/*/b") == nil)
        #expect(PathPattern("/a/x{id}") == nil)
    }
}

/// The tree of pattern paths finds exactly the endpoints that matching each pattern in turn
/// finds, in declaration order, with the same parameters: checked on random pattern sets and
/// paths over a small alphabet, where overlaps (a literal beside a parameter, `*` at every
/// depth, the same pattern twice) are common, and where ASCII parts (looked up by their bytes)
/// meet literals that are canonically equivalent without being the same bytes (the Kelvin sign
/// and "K", a precomposed and a decomposed é).
@Suite struct PathTrieTests {
    static func endpoint(_ path: String, _ index: Int) -> Endpoint {
        Endpoint(method: "GET", path: PathPattern(path)!, rules: [], source: "e\(index)")
    }

    @Test func findsWhatMatchingEachPatternFinds() {
        var random = SeededRandom(seed: 17)
        let words = ["a", "b", "users", "K", "\u{212A}", "caf\u{E9}", "cafe\u{301}", "k", ""]
        for _ in 0..<300 {
            var patterns: [String] = []
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                var parts: [String] = []
                for depth in 0..<Int.random(in: 0...3, using: &random) {
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0, 1: parts.append("{p\(depth)}")
                    case 2: parts.append("*")
                    default: parts.append(words[Int.random(in: 0..<(words.count - 2), using: &random)])
                    }
                    if parts.last == "*" { break }
                }
                patterns.append("/" + parts.joined(separator: "/"))
            }
            let endpoints = patterns.enumerated().compactMap { PathPattern($1) == nil ? nil : Self.endpoint($1, $0) }
            let trie = PathTrie(endpoints)
            for _ in 0..<40 {
                let path = "/" + (0..<Int.random(in: 0...4, using: &random)).map { _ in words.randomElement(using: &random)! }.joined(separator: "/")
                let expected = endpoints.compactMap { endpoint in endpoint.path.match(path).map { (endpoint.source!, $0) } }
                let found = trie.matches(path).map { ($0.endpoint.source!, $0.parameters) }
                #expect(found.map(\.0) == expected.map(\.0), "\(path) against \(patterns)")
                #expect(found.map(\.1) == expected.map(\.1), "\(path) against \(patterns)")
            }
        }
    }

    /// An ASCII part finds a literal by its bytes, and a literal that is only canonically
    /// equal to it (the Kelvin sign for "K") through the canonical table; a non-ASCII part
    /// finds its canonical twin.
    @Test func asciiPartsFindCanonicallyEqualLiterals() {
        let trie = PathTrie(["/\u{212A}/{id}", "/users/{id}", "/caf\u{E9}/x", "/a/b"].enumerated().map { Self.endpoint($1, $0) })
        #expect(trie.matches("/K/1").map { $0.endpoint.source } == ["e0"])
        #expect(trie.matches("/K/1").first?.parameters == [Field("id", "1")])
        #expect(trie.matches("/\u{212A}/1").map { $0.endpoint.source } == ["e0"])
        #expect(trie.matches("/k/1").isEmpty)
        #expect(trie.matches("/users/42").first?.parameters == [Field("id", "42")])
        #expect(trie.matches("/cafe\u{301}/x").map { $0.endpoint.source } == ["e2"])
        #expect(trie.matches("/cafe/x").isEmpty)
        #expect(trie.matches("/a/b").map { $0.endpoint.source } == ["e3"])
        #expect(trie.matches("/a/c").isEmpty && trie.matches("/b").isEmpty && trie.matches("/a/bb").isEmpty)
    }

    @Test func declarationOrderWinsOverSpecificity() {
        let endpoints = ["/users/{id}", "/users/me", "/users/*", "/{kind}/me"].enumerated().map { Self.endpoint($1, $0) }
        let trie = PathTrie(endpoints)
        #expect(trie.matches("/users/me").map { $0.endpoint.source } == ["e0", "e1", "e2", "e3"])
        #expect(trie.matches("/users/42").first?.parameters == [Field("id", "42")])
        #expect(trie.matches("/users").map { $0.endpoint.source } == ["e2"])
        #expect(trie.matches("/users/").map { $0.endpoint.source } == ["e2"])
    }
}
