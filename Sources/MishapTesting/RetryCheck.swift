import Foundation
import MishapService

/// How the client followed one `Retry-After`: an answer that carried the header, and the same
/// client's next request to the same endpoint in the same session. What
/// `GET /__mishap/retries` answers, one entry of its `retries`; times are `Date`s and durations
/// `TimeInterval`s, in **seconds**.
///
/// ```swift
/// let checks = mishap.retries(session: session)
/// #expect(checks.violations == 0)              // no retry came back too early
/// #expect(checks.allSatisfy { $0.honoured == true })   // and every one came back
/// ```
public struct RetryCheck: Sendable {
    /// The session of the requests (`X-Mishap-Session`), nil for requests without one.
    public let session: String?
    /// The endpoint answered, as `GET /isUserNameAvailable`.
    public let endpoint: String
    /// The rule whose answer carried `Retry-After`.
    public let rule: String?
    /// The status of that answer (503, 429, ...).
    public let status: Int
    /// The header as sent: seconds (`"17"`) or an HTTP date.
    public let retryAfter: String
    /// When the answer was sent (after its own delay, if any).
    public let answeredAt: Date
    /// When the client was allowed back: `answeredAt` plus the seconds the header asked for.
    public let allowedAt: Date
    /// When the client came back; nil while it has not.
    public let nextRequestAt: Date?
    /// Seconds between the answer and the next request, to the millisecond.
    public let waited: TimeInterval?
    /// Seconds the header asked for, to the millisecond (exactly 1 for `Retry-After: 1`).
    public let required: TimeInterval
    /// True when the client waited long enough, false when it came back too early, nil while
    /// it has not come back.
    public let honoured: Bool?

    init(_ observation: RetryObservation) {
        session = observation.session
        endpoint = observation.endpoint
        rule = observation.rule
        status = observation.status
        retryAfter = observation.retryAfter
        answeredAt = Date(timeIntervalSince1970: Double(observation.answeredAt) / 1000)
        allowedAt = Date(timeIntervalSince1970: Double(observation.allowedAt) / 1000)
        nextRequestAt = observation.nextRequestAt.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        // From the milliseconds themselves: a difference of two Dates this far from 1970 is
        // off by a few hundred nanoseconds, enough to make `required == 1` false.
        waited = observation.waitedMilliseconds.map { Double($0) / 1000 }
        required = Double(observation.requiredMilliseconds) / 1000
        honoured = observation.honoured
    }
}

extension Array where Element == RetryCheck {
    /// How many retries came back too early (`honoured == false`): what `GET /__mishap/retries`
    /// answers as `violations`. A test of a client's backoff expects 0.
    public var violations: Int { reduce(0) { $0 + ($1.honoured == false ? 1 : 0) } }

    /// How many answers with `Retry-After` the client has not come back after yet.
    public var pending: Int { reduce(0) { $0 + ($1.honoured == nil ? 1 : 0) } }
}
