import Foundation
import MishapTestSupport
import Testing

/// `GET /isUserNameAvailable`, one test per row of seed-server.md, against the default scenarios.
@Suite(.onBlockingThreads) struct UserNameAvailabilityTests {
    /// Asks about `name`, percent-encoding it.
    func check(_ name: String, on server: TestServer) async throws -> ClientResponse {
        try await server.send("GET", "/isUserNameAvailable?userName=\(name.queryEncoded)")
    }

    func expectError(_ response: ClientResponse, status: Int, reason: String, retryAfter: String? = nil) {
        #expect(response.status == status)
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.header("Retry-After") == retryAfter)
        #expect(response.json?["error"] as? Bool == true)
        #expect(response.json?["reason"] as? String == reason)
        #expect(response.json?.count == 2)
    }

    func expectAnswer(_ response: ClientResponse, isAvailable: Bool, userName: String) {
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.header("Retry-After") == nil)
        #expect(response.json?["isAvailable"] as? Bool == isAvailable)
        #expect(response.json?["userName"] as? String == userName)
        #expect(response.json?.count == 2)
    }

    /// A query as a client sends it, and the answer it must get.
    struct Query: Sendable, CustomTestStringConvertible {
        enum Answer: Sendable {
            case error(status: Int, reason: String)
            case available(Bool, userName: String)
        }

        let testDescription: String
        /// What follows `/isUserNameAvailable`, percent-encoded.
        let query: String
        let answer: Answer

        init(_ description: String, query: String, _ answer: Answer) {
            testDescription = description
            self.query = query
            self.answer = answer
        }

        /// `?userName=NAME`, percent-encoded.
        init(name: String, _ answer: Answer) {
            self.init(name, query: "?userName=\(name.queryEncoded)", answer)
        }
    }

    static let queries: [Query] = [
        // Row 1
        Query("No parameter", query: "", .error(status: 400, reason: "Username parameter missing")),
        Query("Another parameter alone counts as missing", query: "?name=someone", .error(status: 400, reason: "Username parameter missing")),
        // Row 2
        Query("An empty name", query: "?userName=", .error(status: 400, reason: "Username must not be empty")),
        // Row 3: characters as Swift counts them. The family emoji is five scalars and 18 bytes.
    ] + ["a", "ab", "abc", "👨‍👩‍👧", "é", "👍🏽👍🏽👍🏽"].map { Query(name: $0, .error(status: 400, reason: "Username is too short.")) } + [
        Query("The family emoji as 18 percent-encoded bytes", query: "?userName=%F0%9F%91%A8%E2%80%8D%F0%9F%91%A9%E2%80%8D%F0%9F%91%A7",
              .error(status: 400, reason: "Username is too short.")),
    ] + ["abcd", "👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧"].map { Query(name: $0, .available(true, userName: $0)) }
        // Row 4
        + ["admin", "superuser"].map { Query(name: $0, .error(status: 400, reason: "Username is not valid: \($0).")) }
        // Row 5
        + [Query(name: "servererror", .error(status: 500, reason: "The database is corrupted"))]
        // Row 9
        + ["peterfriese", "johnnyappleseed", "page", "johndoe"].map { Query(name: $0, .available(false, userName: $0)) }
        // Row 10; `+` is how HTML forms encode a space in a query: the name must not keep the plus.
        + ["someone", "Admin", "servererror2", "maintenance?", "peterfriese "].map { Query(name: $0, .available(true, userName: $0)) }
        + [Query("A plus in the query is a space", query: "?userName=john+doe", .available(true, userName: "john doe"))]

    @Test(arguments: queries)
    func queryIsAnsweredLikeTheSeedServer(_ query: Query) async throws {
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable" + query.query)
        switch query.answer {
        case .error(let status, let reason): expectError(response, status: status, reason: reason)
        case .available(let isAvailable, let userName): expectAnswer(response, isAvailable: isAvailable, userName: userName)
        }
    }

    @Test func queryValueIsPercentDecoded() async throws {
        // "jörg": 4 characters but 5 bytes, so neither too short nor mangled.
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=j%C3%B6rg")
        expectAnswer(response, isAvailable: true, userName: "jörg")
        #expect(response.text.contains("jörg"))
    }

    // Row 6
    @Test func maintenanceFailsTwiceThenSucceedsThenFailsAgain() async throws {
        let server = try TestServer()
        for call in 1...2 {
            let response = try await check("maintenance", on: server)
            #expect(response.status == 500, "call \(call)")
            expectError(response, status: 500, reason: "Temporarily unavailable for maintenance", retryAfter: "17")
        }
        let third = try await check("maintenance", on: server)
        expectAnswer(third, isAvailable: true, userName: "maintenance")
        #expect(third.text == #"{"isAvailable":true,"userName":"maintenance"}"#)

        let fourth = try await check("maintenance", on: server)
        expectError(fourth, status: 500, reason: "Temporarily unavailable for maintenance", retryAfter: "17")
    }

    @Test func maintenanceCounterIsNotAdvancedByOtherNames() async throws {
        let server = try TestServer()
        let first = try await check("maintenance", on: server)
        _ = try await check("someone", on: server)
        _ = try await check("maintenance!", on: server)
        let second = try await check("maintenance", on: server)
        let third = try await check("maintenance", on: server)
        #expect([first.status, second.status, third.status] == [Int]([500, 500, 200]))
    }

    // Row 7
    @Test func maintenanceWithBangAlwaysFailsWithRetryAfter() async throws {
        let server = try TestServer()
        for call in 1...4 {
            let response = try await server.send("GET", "/isUserNameAvailable?userName=maintenance%21")
            #expect(response.status == 500, "call \(call)")
            expectError(response, status: 500, reason: "Temporarily unavailable for maintenance", retryAfter: "17")
        }
    }

    @Test func maintenanceWithRawBangAlwaysFailsWithRetryAfter() async throws {
        let server = try TestServer()
        for call in 1...4 {
            let response = try server.sendRaw("GET", "/isUserNameAvailable?userName=maintenance!")
            #expect(response.status == 500, "call \(call)")
            expectError(response, status: 500, reason: "Temporarily unavailable for maintenance", retryAfter: "17")
        }
    }

    // Row 8
    @Test func illegalresponseLeavesOutTheUserName() async throws {
        let server = try TestServer()
        let response = try await check("illegalresponse", on: server)
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.text == #"{"isAvailable":false}"#)
        #expect(response.json?["userName"] == nil)
    }
}

@Suite(.onBlockingThreads) struct QueryDecodingTests {
    @Test func anEncodedNulDoesNotCutTheValueShort() async throws {
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=abcd%00efg")
        #expect(response.status == 200)
        #expect(response.json?["userName"] as? String == "abcd\u{0}efg")
    }
}
