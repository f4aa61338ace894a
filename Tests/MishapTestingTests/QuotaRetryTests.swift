import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTesting
import MishapTestSupport
import Testing

/// The rate-limited `GET /search` of the default scenarios (5 requests per 10 s per session)
/// over URLSession: its `Retry-After` is right to within a second, a client that honours it
/// passes the retries check, and one that does not is flagged.
@Suite(.onBlockingThreads) struct QuotaRetryTests {
    static func search(_ mishap: RunningMishap, _ session: MishapSession, using client: URLSession) async throws -> HTTPURLResponse {
        var request = URLRequest(url: mishap.url("/search?q=swift"))
        session.apply(to: &request)
        let (_, response) = try await client.data(for: request)
        return try #require(response as? HTTPURLResponse)
    }

    @Test func retryAfterIsRightToWithinASecondAndHonouringItPasses() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            let client = URLSession(configuration: .ephemeral)
            defer { client.finishTasksAndInvalidate() }
            var remaining: [String?] = []
            for _ in 1...5 {
                let answer = try await Self.search(mishap, session, using: client)
                #expect(answer.statusCode == 200)
                remaining.append(answer.value(forHTTPHeaderField: "RateLimit-Remaining"))
            }
            #expect(remaining == ["4", "3", "2", "1", "0"])
            let refusedAt = ContinuousClock.now
            let refused = try await Self.search(mishap, session, using: client)
            #expect(refused.statusCode == 429)
            #expect(refused.value(forHTTPHeaderField: "RateLimit-Limit") == "5")
            let retryAfter = try #require(refused.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init))
            // The slot frees 10 s after the first request arrived; the header rounds the wait up.
            // Arrival times from the journal: a loaded machine may take a second to send them.
            let arrivals = mishap.requests(session: session).map(\.date)
            try #require(arrivals.count == 6)
            let exact = arrivals[0].addingTimeInterval(10).timeIntervalSince(arrivals[5])
            #expect((exact - 0.05...exact + 1).contains(Double(retryAfter)), "Retry-After \(retryAfter), expected \(exact) rounded up")
            // Well before the wait is over: still refused (the slot frees after Retry-After - 1 s;
            // 1.5 s more leaves room for a loaded machine's late delivery).
            try await Task.sleep(until: refusedAt + .seconds(retryAfter) - .milliseconds(2500))
            #expect(try await Self.search(mishap, session, using: client).statusCode == 429)
            // That early retry is flagged; a fresh session honours its Retry-After below.
            #expect(mishap.retries(session: session).first?.honoured == false)

            let polite = mishap.session()
            for _ in 1...5 { _ = try await Self.search(mishap, polite, using: client) }
            let told = try await Self.search(mishap, polite, using: client)
            let wait = try #require(told.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init))
            try await Task.sleep(for: .seconds(wait))
            #expect(try await Self.search(mishap, polite, using: client).statusCode == 200, "the wait Retry-After asked for is enough")
            let checks = mishap.retries(session: polite)
            #expect(checks.count == 1 && checks.first?.honoured == true, "\(checks)")
            #expect(checks.first?.status == 429 && checks.first?.endpoint == "GET /search")
        }
    }

    @Test func aClientThatRetriesAtOnceIsFlagged() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            let client = URLSession(configuration: .ephemeral)
            defer { client.finishTasksAndInvalidate() }
            for _ in 1...7 { _ = try await Self.search(mishap, session, using: client) }
            #expect(mishap.requests(session: session).map(\.status) == [200, 200, 200, 200, 200, 429, 429])
            let checks = mishap.retries(session: session)
            #expect(checks.first?.honoured == false, "\(checks)")
            #expect(checks.violations >= 1)
            // Another session has its own count.
            #expect(try await Self.search(mishap, mishap.session(), using: client).statusCode == 200)
        }
    }
}
