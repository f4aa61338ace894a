import Foundation
import MishapService

/// How the client followed one `Retry-After`.
public struct RetryCheck: Sendable {
    public let session: String?
    public let endpoint: String
    public let rule: String?
    public let status: Int
    /// The header as sent.
    public let retryAfter: String
    /// When the answer was sent, and when the client was allowed back.
    public let answeredAt: Date
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
