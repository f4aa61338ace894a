import Foundation
import MishapTestSupport
import Testing

/// `GET /isUserNameAvailable` of the default scenarios over a socket: what the server does to a
/// name before the engine sees it, and the rows that depend on a sequence of requests.
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

    /// What the server does to a name on its way to the engine: percent-decoding (bytes, then
    /// characters), and `+` as a space, as HTML forms encode it. Which rule answers each name is
    /// the scenarios' choice, tested against the engine in MishapScenariosTests'
    /// UserNameAvailabilityRowTests, row by row.
    static let queries: [Query] = [
        Query("No parameter", query: "", .error(status: 400, reason: "Username parameter missing")),
        Query("The family emoji as 18 percent-encoded bytes", query: "?userName=%F0%9F%91%A8%E2%80%8D%F0%9F%91%A9%E2%80%8D%F0%9F%91%A7",
              .error(status: 400, reason: "Username is too short.")),
        Query(name: "peterfriese ", .available(true, userName: "peterfriese ")),
        Query(name: "maintenance?", .available(true, userName: "maintenance?")),
        Query("A plus in the query is a space", query: "?userName=john+doe", .available(true, userName: "john doe")),
    ]

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
}

@Suite(.onBlockingThreads) struct QueryDecodingTests {
    @Test func anEncodedNulDoesNotCutTheValueShort() async throws {
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=abcd%00efg")
        #expect(response.status == 200)
        #expect(response.json?["userName"] as? String == "abcd\u{0}efg")
    }
}
