import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTesting
import MishapTestSupport
import Testing

/// Server errors: which the client retries, how long it waits, and the server's proof that it
/// waited as told (`mishap.retries`).
@Suite(.onBlockingThreads) struct ServerErrorTests {
    static let maintenanceReason = "Temporarily unavailable for maintenance"

    /// `servererror` is a 500 without `Retry-After`: reported at once, never retried.
    @Test func databaseCorruptedIsNotRetried() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            let client = mishap.client(in: session)
            await #expect(throws: APIError.server(status: 500, reason: "The database is corrupted", retryAfter: nil)) {
                try await client.checkUserNameAvailable("servererror")
            }
            #expect(mishap.requests(session: session).count == 1)
            #expect(mishap.retries(session: session).isEmpty)
        }
    }

    /// `maintenance` fails twice with `Retry-After: 1`; the client waits as told and the third request succeeds.
    @Test func maintenanceClearsAfterTwoHonouredRetries() async throws {
        try await Mishap.withServer(scenarios: quickMaintenance) { mishap in
            let session = mishap.session()
            let client = mishap.client(in: session)

            let answer = try await client.checkUserNameAvailable("maintenance")
            #expect(answer == UserNameAvailableMessage(isAvailable: true, userName: "maintenance"))

            let requests = mishap.requests(session: session)
            #expect(requests.map(\.status) == [500, 500, 200])
            #expect(requests.map(\.rule) == ["maintenance", "maintenance", "available"])
            #expect(gaps(requests).allSatisfy { $0 >= 1 }, "\(gaps(requests))")
            let retries = mishap.retries(session: session)
            #expect(retries.count == 2)
            #expect(retries.allSatisfy { $0.honoured == true && $0.required == 1 }, "\(retries.map(\.waited))")
            #expect(!retries.contains { $0.honoured == false })
        }
    }

    /// `maintenance!` never clears: the client gives up after its budget of 3 requests, each retry honoured.
    @Test func endlessMaintenanceExhaustsTheRetryBudget() async throws {
        try await Mishap.withServer(scenarios: quickMaintenance) { mishap in
            let session = mishap.session()
            let client = mishap.client(in: session, retryPolicy: RetryPolicy(maxAttempts: 3))

            await #expect(throws: APIError.server(status: 500, reason: Self.maintenanceReason, retryAfter: 1)) {
                try await client.checkUserNameAvailable("maintenance!")
            }
            #expect(mishap.requests(session: session).map(\.status) == [500, 500, 500])
            // The last 500 is still open: the client rightly never came back.
            #expect(mishap.retries(session: session).map(\.honoured) == [true, true, nil])
        }
    }

    /// The default `maintenance` asks for 17 s, more than the client waits for: reported at once.
    @Test func retryAfterLongerThanTheClientWaitsIsReportedAtOnce() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            let client = mishap.client(in: session)
            await #expect(throws: APIError.server(status: 500, reason: Self.maintenanceReason, retryAfter: 17)) {
                try await client.checkUserNameAvailable("maintenance")
            }
            #expect(mishap.requests(session: session).count == 1)
        }
    }

    /// 429 and 503 with a long `Retry-After`, in seconds or as an HTTP date: `.server`, not retried.
    @Test(arguments: [
        ("ratelimited", 429, "Too many requests", 30.0),
        ("ratelimiteddate", 429, "Too many requests", 30.0),
        ("unavailable", 503, "Service unavailable", 60.0),
        ("unavailableseconds", 503, "Service unavailable", 120.0),
    ])
    func longRetryAfterIsReported(userName: String, status: Int, reason: String, seconds: TimeInterval) async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            let error = await apiError { try await mishap.client(in: session).checkUserNameAvailable(userName) }
            guard case .server(status, reason, let retryAfter?) = error else {
                Issue.record("expected a \(status) server error, got \(String(describing: error))")
                return
            }
            // An HTTP date is whole seconds, a moment ago (several on a loaded machine, where
            // URLSession's one shared thread delays the answer).
            #expect((seconds - 15)...seconds ~= retryAfter)
            #expect(mishap.requests(session: session).count == 1)
        }
    }

    /// 502 and 504 carry no `Retry-After`: nothing says waiting helps, so no retry.
    @Test(arguments: [("badgateway", 502, "Bad gateway"), ("gatewaytimeout", 504, "Gateway timeout")])
    func gatewayErrorIsNotRetried(userName: String, status: Int, reason: String) async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            await #expect(throws: APIError.server(status: status, reason: reason, retryAfter: nil)) {
                try await mishap.client(in: session).checkUserNameAvailable(userName)
            }
            #expect(mishap.requests(session: session).count == 1)
        }
    }

    /// 401 and 408 are neither validation nor server errors: `.unexpectedStatus` with the reason.
    @Test(arguments: [("unauthorized", 401, "Unauthorized"), ("requesttimeout", 408, "Request timeout")])
    func otherStatusIsUnexpected(userName: String, status: Int, reason: String) async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            await #expect(throws: APIError.unexpectedStatus(status, reason: reason)) {
                try await mishap.client(in: mishap.session()).checkUserNameAvailable(userName)
            }
        }
    }

    /// `flaky` fails about half the time (a seed makes it repeat); a 500 without `Retry-After` is never retried.
    @Test func flakyFailuresAreNotRetried() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios, options: MishapOptions(seed: 42)) { mishap in
            let session = mishap.session()
            let client = mishap.client(in: session)
            var failures = 0
            for _ in 1...20 {
                switch await apiError({ try await client.checkUserNameAvailable("flaky") }) {
                case nil: break
                case .server(500, "Internal server error", nil)?: failures += 1
                case let other?: Issue.record("unexpected \(other)")
                }
            }
            #expect((1...19).contains(failures))
            #expect(mishap.requests(session: session).count == 20)
        }
    }

    /// A client back before `Retry-After` is caught: its retry check says `honoured == false`.
    /// (The default scenarios' maintenance asks for 17 s, so "at once" is early even on a
    /// loaded machine.)
    @Test func impatientClientIsCaught() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            var request = URLRequest(url: mishap.url("/isUserNameAvailable?userName=maintenance"))
            session.apply(to: &request)
            let urlSession = URLSession(configuration: .ephemeral)
            defer { urlSession.finishTasksAndInvalidate() }
            _ = try await urlSession.data(for: request)
            _ = try await urlSession.data(for: request)

            let check = try #require(mishap.retries(session: session).first)
            #expect(check.honoured == false)
            let waited = try #require(check.waited)
            #expect(waited < check.required)
        }
    }

    /// `reset(session:)` starts the session's cycle over and empties its journal.
    @Test func resetStartsTheCycleOver() async throws {
        try await Mishap.withServer(scenarios: quickMaintenance) { mishap in
            let session = mishap.session()
            let client = mishap.client(in: session, retryPolicy: .never)
            _ = await apiError { try await client.checkUserNameAvailable("maintenance") }
            _ = await apiError { try await client.checkUserNameAvailable("maintenance") }
            mishap.reset(session: session)
            #expect(mishap.requests(session: session).isEmpty)

            // Without the reset this would be the third call, the one that succeeds.
            await #expect(throws: APIError.server(status: 500, reason: Self.maintenanceReason, retryAfter: 1)) {
                try await client.checkUserNameAvailable("maintenance")
            }
        }
    }
}
