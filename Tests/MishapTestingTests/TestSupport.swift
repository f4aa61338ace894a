import Foundation
import MishapTestSupport
import MishapTesting
import Testing

/// The repository's `scenarios/` folder: what `mishap serve` answers with out of the box.
let defaultScenarios = Mishap.Scenarios.directory(defaultScenariosDirectory)

/// The maintenance rules of the default scenarios, both endpoints, with `Retry-After: 1`
/// instead of 17 so that a test waits seconds, not minutes. `maintenance` fails twice and then
/// falls through to `available`; `maintenance!` fails always.
let quickMaintenance = Mishap.Scenarios.yaml("""
    endpoints:
      - endpoint: GET /isUserNameAvailable
        rules:
          - name: maintenance
            when: { query: { userName: maintenance } }
            cycle:
              - { status: 500, headers: { Retry-After: "1" }, json: { error: true, reason: "Temporarily unavailable for maintenance" } }
              - { status: 500, headers: { Retry-After: "1" }, json: { error: true, reason: "Temporarily unavailable for maintenance" } }
              - pass
          - name: maintenanceForever
            when: { query: { userName: "maintenance!" } }
            respond: { status: 500, headers: { Retry-After: "1" }, json: { error: true, reason: "Temporarily unavailable for maintenance" } }
          - name: available
            respond: { status: 200, json: { isAvailable: true, userName: "{{query.userName}}" } }
      - endpoint: POST /login
        rules:
          - name: maintenance
            when: { body: { email: { prefix: "maintenance@" } } }
            cycle:
              - { status: 500, headers: { Retry-After: "1" }, json: { error_message: "Temporarily unavailable for maintenance" } }
              - { status: 500, headers: { Retry-After: "1" }, json: { error_message: "Temporarily unavailable for maintenance" } }
              - { status: 200, json: { user_id: "123", token: "c7d83mdla_3ms" } }
    """, name: "quick-maintenance.yaml")

extension RunningMishap {
    /// The seed's client, pointed at this server, its requests in `session`. `timeout` is the
    /// idle timeout, in whole seconds on Linux (swift-corelibs-foundation drops the fraction).
    func client(in session: MishapSession, retryPolicy: RetryPolicy = RetryPolicy(),
                timeout: TimeInterval? = nil) -> AuthenticationService {
        let configuration = session.configuration
        if let timeout { configuration.timeoutIntervalForRequest = timeout }
        return AuthenticationService(baseURL: baseURL, configuration: configuration, retryPolicy: retryPolicy)
    }
}

/// The `APIError` `body` throws, nil when it succeeds.
func apiError<T>(_ body: () async throws -> T) async -> APIError? {
    do {
        _ = try await body()
        return nil
    } catch let error as APIError {
        return error
    } catch {
        Issue.record("not an APIError: \(error)")
        return nil
    }
}

/// Seconds between consecutive requests as the server received them, to the millisecond the
/// journal keeps (a bare difference of two `Date`s is off by a few hundred nanoseconds).
func gaps(_ requests: [RecordedRequest]) -> [TimeInterval] {
    zip(requests, requests.dropFirst()).map { ($1.date.timeIntervalSince($0.date) * 1000).rounded() / 1000 }
}
