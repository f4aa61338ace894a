import Foundation
import MishapTestSupport
import Testing

/// The `maintenance` cycle under concurrent clients: one counter per rule, shared by every server
/// thread, with no request lost or counted twice.
@Suite(.onBlockingThreads) struct ConcurrencyTests {
    static let maintenance = "/isUserNameAvailable?userName=maintenance"

    /// Sends `tasks` × `requestsPerTask` maintenance checks, the tasks concurrently and each
    /// task's requests one after another; returns every response.
    func checkMaintenance(on server: TestServer, tasks: Int, requestsPerTask: Int) async throws -> [ClientResponse] {
        try await withThrowingTaskGroup(of: [ClientResponse].self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    var responses: [ClientResponse] = []
                    for _ in 0..<requestsPerTask {
                        responses.append(try await server.send("GET", Self.maintenance))
                    }
                    return responses
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    func expectEveryThirdSucceeds(_ responses: [ClientResponse], total: Int) {
        #expect(responses.count == total)
        let successes = responses.filter { $0.status == 200 }
        let failures = responses.filter { $0.status == 500 }
        #expect(successes.count == total / 3)
        #expect(failures.count == total - total / 3)
        #expect(successes.allSatisfy { $0.json?["userName"] as? String == "maintenance" && $0.header("Retry-After") == nil })
        #expect(failures.allSatisfy { $0.header("Retry-After") == "17" })
        #expect(failures.allSatisfy { $0.json?["reason"] as? String == "Temporarily unavailable for maintenance" })
    }

    @Test func thirtyConcurrentChecksSucceedExactlyTenTimes() async throws {
        let server = try TestServer()
        let responses = try await checkMaintenance(on: server, tasks: 30, requestsPerTask: 1)
        expectEveryThirdSucceeds(responses, total: 30)
    }

    @Test func threeHundredChecksOverThirtyTasksSucceedExactlyOneHundredTimes() async throws {
        let server = try TestServer()
        let responses = try await checkMaintenance(on: server, tasks: 30, requestsPerTask: 10)
        expectEveryThirdSucceeds(responses, total: 300)
    }

    @Test func cycleContinuesWhereConcurrentClientsLeftIt() async throws {
        // 31 calls so far: positions 0...30, so the next two are positions 31 (500) and 32 (200).
        let server = try TestServer()
        _ = try await checkMaintenance(on: server, tasks: 31, requestsPerTask: 1)
        let next = try await server.send("GET", Self.maintenance)
        let afterThat = try await server.send("GET", Self.maintenance)
        #expect(next.status == 500)
        #expect(afterThat.status == 200)
    }

    @Test func concurrentRawConnectionsEachGetTheirOwnAnswers() async throws {
        // Many keep-alive connections at once, each asking for its own name: no answer crosses over.
        let server = try TestServer()
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<16 {
                group.addTask {
                    let connection = try server.connect()
                    var wrong = 0
                    for request in 0..<20 {
                        let name = "user\(task)x\(request)"
                        try connection.sendRequest("GET", "/isUserNameAvailable?userName=\(name)")
                        let response = try connection.readResponse()
                        if response.status != 200 || response.json?["userName"] as? String != name { wrong += 1 }
                    }
                    return wrong
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}
