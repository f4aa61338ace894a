import MishapSupport

extension MishapService {
    /// How the client of `session` (nil: the requests without one) handled the failures it met:
    /// the eight checks of `VerdictChecks`, judged on the session's own history (never on
    /// evidence that was let go of: then every check has nothing to judge, and says why).
    public func verdict(session: String?, options: VerdictOptions = VerdictOptions()) -> ClientVerdict {
        let now = sessionNow(session)
        var lost: String?
        var attempts: [ClientAttempt] = []
        switch history.lookup(session: session) {
        case .kept(let record):
            attempts = record.attempts.items
            if record.evictedBefore {
                lost = "the session's earlier history was let go of to make room for newer sessions "
                    + "(\(history.maxSessions) sessions and \(history.maxAttempts) attempts are kept)"
            } else if record.dropped > 0 {
                lost = "the session's first \(VerdictChecks.plural(record.dropped, "attempt")) were let go of "
                    + "(a session keeps its last \(history.attemptsPerSession)); reset the session, or use one per test"
            }
        case .evicted:
            lost = "the session's history was let go of to make room for newer sessions "
                + "(\(history.maxSessions) sessions and \(history.maxAttempts) attempts are kept)"
        case .none:
            break
        }
        if let endpoint = options.endpoint { attempts = attempts.filter { $0.endpoint == endpoint } }
        var checks: [VerdictCheck]
        if let lost {
            checks = VerdictCheck.names.map { name in
                VerdictCheck(name: name, passed: nil, summary: "Not judged: \(lost).", details: [], evidence: [])
            }
        } else {
            checks = VerdictChecks(attempts: attempts, options: options, now: now).all()
        }
        return ClientVerdict(session: session, passed: !checks.contains { $0.passed == false }, endpoint: options.endpoint,
                             attempts: attempts.count, grouping: ClientVerdict.grouping, options: options, checks: checks)
    }

    /// The time in `session` now, in milliseconds since 1970: with the time its clock was moved
    /// forward (`POST /__mishap/clock`), so that a client that comes back after a `Retry-After`
    /// the test let pass by moving the clock waited as asked.
    func sessionNow(_ session: String?) -> Int64 {
        WallClock.nowMilliseconds() + clockOffset(session: session)
    }
}
