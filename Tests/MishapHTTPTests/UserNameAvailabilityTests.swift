import Foundation
import MishapTestSupport
import Testing

/// `GET /isUserNameAvailable`, one test per row of seed-server.md, against the default scenarios.
@Suite struct UserNameAvailabilityTests {
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

    // Row 1
    @Test func missingParameterIsRejected() async throws {
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable")
        expectError(response, status: 400, reason: "Username parameter missing")
    }

    @Test func anotherParameterAloneCountsAsMissing() async throws {
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?name=someone")
        expectError(response, status: 400, reason: "Username parameter missing")
    }

    // Row 2
    @Test func emptyNameIsRejected() async throws {
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=")
        expectError(response, status: 400, reason: "Username must not be empty")
    }

    // Row 3: characters as Swift counts them. The family emoji is five scalars and 18 bytes.
    @Test(arguments: ["a", "ab", "abc", "👨‍👩‍👧", "é", "👍🏽👍🏽👍🏽"])
    func threeCharactersOrFewerAreTooShort(name: String) async throws {
        let server = try TestServer()
        let response = try await check(name, on: server)
        expectError(response, status: 400, reason: "Username is too short.")
    }

    @Test func familyEmojiIsSentAsEighteenPercentEncodedBytes() async throws {
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=%F0%9F%91%A8%E2%80%8D%F0%9F%91%A9%E2%80%8D%F0%9F%91%A7")
        expectError(response, status: 400, reason: "Username is too short.")
    }

    @Test(arguments: ["abcd", "👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧"])
    func fourCharactersAreLongEnough(name: String) async throws {
        let server = try TestServer()
        let response = try await check(name, on: server)
        expectAnswer(response, isAvailable: true, userName: name)
    }

    @Test func queryValueIsPercentDecoded() async throws {
        // "jörg": 4 characters but 5 bytes, so neither too short nor mangled.
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=j%C3%B6rg")
        expectAnswer(response, isAvailable: true, userName: "jörg")
        #expect(response.text.contains("jörg"))
    }

    // Row 4
    @Test(arguments: ["admin", "superuser"])
    func reservedNamesAreNotValid(name: String) async throws {
        let server = try TestServer()
        let response = try await check(name, on: server)
        expectError(response, status: 400, reason: "Username is not valid: \(name).")
    }

    // Row 5
    @Test func servererrorFailsWithoutRetryAfter() async throws {
        let server = try TestServer()
        let response = try await check("servererror", on: server)
        expectError(response, status: 500, reason: "The database is corrupted", retryAfter: nil)
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

    // Row 9
    @Test(arguments: ["peterfriese", "johnnyappleseed", "page", "johndoe"])
    func takenNamesAreNotAvailable(name: String) async throws {
        let server = try TestServer()
        let response = try await check(name, on: server)
        expectAnswer(response, isAvailable: false, userName: name)
    }

    // Row 10
    @Test(arguments: ["someone", "Admin", "servererror2", "maintenance?", "peterfriese "])
    func anyOtherNameIsAvailable(name: String) async throws {
        let server = try TestServer()
        let response = try await check(name, on: server)
        expectAnswer(response, isAvailable: true, userName: name)
    }

    @Test func plusInTheQueryIsASpace() async throws {
        // `+` is how HTML forms encode a space in a query; the name must not keep the plus.
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=john+doe")
        expectAnswer(response, isAvailable: true, userName: "john doe")
    }
}

@Suite struct QueryDecodingTests {
    @Test func anEncodedNulDoesNotCutTheValueShort() async throws {
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=abcd%00efg")
        #expect(response.status == 200)
        #expect(response.json?["userName"] as? String == "abcd\u{0}efg")
    }
}
