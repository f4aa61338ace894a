import MishapSupport

/// The checks of the verdict, judged on one session's attempts in arrival order. Pure: the
/// attempts and the session's time now in, the checks out.
struct VerdictChecks {
    let attempts: [ClientAttempt]
    let options: VerdictOptions
    /// The session's time now, in milliseconds since 1970.
    let now: Int64

    /// The methods RFC 9110 (section 9.2.2) calls idempotent: sending one again does what
    /// sending it once did.
    static let idempotentMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]

    /// The backoff check's figures: waits must grow by this factor from the first half of a
    /// streak to the second, by at least `backoffMinimumGrowthMilliseconds`, and a streak may
    /// not go faster than `hammeringAttemptsPerSecond`.
    static let backoffGrowthFactor = 1.5
    static let backoffMinimumGrowthMilliseconds: Int64 = 50
    static let hammeringAttemptsPerSecond = 10.0
    /// How long after a refresh was answered the expired token may still arrive (requests
    /// already on their way).
    static let staleTokenGraceMilliseconds: Int64 = 1_000

    /// Every check, in the verdict's order.
    func all() -> [VerdictCheck] {
        [retryAfter(), backoff(), attemptBudget(), unsafeRetry(), clientErrorRetry(), oneRefresh(), giveUp(), reconnect()]
    }

    // MARK: Groups

    /// The indices of `attempts` per request (same method, path with query, and body), each in
    /// arrival order, the groups in the order of their first attempt.
    var groups: [[Int]] {
        var order: [Int: Int] = [:]
        var groups: [[Int]] = []
        for (index, attempt) in attempts.enumerated() {
            if let group = order[attempt.requestHash] {
                groups[group].append(index)
            } else {
                order[attempt.requestHash] = groups.count
                groups.append([index])
            }
        }
        return groups
    }

    func evidence(_ index: Int, waited: Int64? = nil, note: String? = nil) -> VerdictEvidence {
        let attempt = attempts[index]
        return VerdictEvidence(id: attempt.id, time: attempt.time, request: attempt.request, answer: attempt.answer,
                               rule: attempt.rule, waitedMilliseconds: waited, note: note)
    }

    /// Milliseconds between the end of attempt `earlier` (its answer, or the connection's end)
    /// and the arrival of `later`, never below 0.
    func wait(from earlier: Int, to later: Int) -> Int64 {
        let end = attempts[earlier].end ?? attempts[later].time
        return max(0, attempts[later].time - end)
    }

    static func seconds(_ milliseconds: Int64) -> String {
        if milliseconds < 1000 { return "\(milliseconds) ms" }
        let tenths = (milliseconds + 50) / 100
        return tenths % 10 == 0 ? "\(tenths / 10) s" : "\(tenths / 10).\(tenths % 10) s"
    }

    /// One decimal: `3.5`.
    static func decimal(_ value: Double) -> String {
        guard value.isFinite else { return "∞" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(abs(tenths % 10))"
    }

    static func plural(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }
}
