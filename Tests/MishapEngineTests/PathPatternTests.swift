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

    @Test func rejectsNonPaths() {
        #expect(PathPattern("users") == nil)
        #expect(PathPattern("/a/*/b") == nil)
        #expect(PathPattern("/a/x{id}") == nil)
    }
}
