import MishapSupport

/// The checks of how long a client waited and how often it tried: `Retry-After` honoured,
/// backoff, the attempt budget.
extension VerdictChecks {
    // MARK: 1. Retry-After honoured

    /// RFC 9110, section 10.2.3: `Retry-After` on a 503 or 429 (RFC 6585) or a 3xx says how long
    /// the client ought to wait before its next request. Each answer carrying it is paired with
    /// the client's next request to the same endpoint in the session.
    func retryAfter() -> VerdictCheck {
        var evidence: [VerdictEvidence] = []
        var early = 0, honoured = 0, waiting = 0
        for (index, attempt) in attempts.enumerated() {
            guard let header = attempt.retryAfter, let endpoint = attempt.endpoint else { continue }
            let answeredAt = attempt.time + Int64(attempt.delayMilliseconds)
            let allowedAt = RetryTracker.allowedAt(header, answeredAt: answeredAt)
            let required = allowedAt - answeredAt
            guard let next = attempts[(index + 1)...].firstIndex(where: { $0.endpoint == endpoint }) else {
                waiting += 1
                evidence.append(self.evidence(index, note: "Retry-After: \(header); the client has not come back"))
                continue
            }
            let waited = attempts[next].time - answeredAt
            if attempts[next].time >= allowedAt {
                honoured += 1
                evidence.append(self.evidence(next, waited: waited,
                                              note: "Retry-After: \(header) asked for \(Self.seconds(required)); waited \(Self.seconds(waited))"))
            } else {
                early += 1
                evidence.append(self.evidence(next, waited: waited,
                                              note: "Retry-After: \(header) asked for \(Self.seconds(required)); came back after \(Self.seconds(waited)), "
                                                + "\(Self.seconds(allowedAt - attempts[next].time)) early"))
            }
        }
        let judged = early + honoured
        let details: [(String, Double)] = [("honoured", Double(honoured)), ("early", Double(early)), ("notBack", Double(waiting))]
        if judged == 0 {
            let summary = waiting == 0 ? "No answer carried Retry-After."
                : "\(Self.plural(waiting, "answer")) carried Retry-After and the client did not come back to that endpoint."
            return VerdictCheck(name: "retryAfter", passed: nil, summary: summary, details: details, evidence: evidence)
        }
        let summary = early > 0
            ? "\(early) of \(judged) retries after a Retry-After came back too early: \(firstNote(evidence, containing: "early"))."
            : "The client waited as Retry-After asked, \(judged) of \(judged) times."
        return VerdictCheck(name: "retryAfter", passed: early == 0, summary: summary, details: details, evidence: evidence)
    }

    private func firstNote(_ evidence: [VerdictEvidence], containing word: String) -> String {
        guard let found = evidence.first(where: { $0.note?.contains(word) == true }) else { return "" }
        return "\(found.request) (#\(found.id)): \(found.note ?? "")"
    }

    // MARK: 2. Backoff

    /// A failure streak of one request: consecutive attempts each after a transient failure
    /// that carried no `Retry-After`, and the waits between them.
    struct Streak {
        var indices: [Int]
        var waits: [Int64]
    }

    /// The streaks of every group with at least one retry.
    func streaks() -> [Streak] {
        var streaks: [Streak] = []
        for group in groups {
            var current = Streak(indices: [], waits: [])
            for position in group.indices.dropLast() {
                let attempt = attempts[group[position]]
                // After a hang or a dribble, when the client closed is known only to within the
                // moment the server noticed: the wait that follows is not judged.
                if attempt.failedTransiently && attempt.retryAfter == nil && !attempt.hang && !attempt.dribble {
                    if current.indices.isEmpty { current.indices.append(group[position]) }
                    current.indices.append(group[position + 1])
                    current.waits.append(wait(from: group[position], to: group[position + 1]))
                } else if !current.indices.isEmpty {
                    streaks.append(current)
                    current = Streak(indices: [], waits: [])
                }
            }
            if !current.indices.isEmpty { streaks.append(current) }
        }
        return streaks
    }

    /// Exponential backoff, as the seed article's client and every retry library do it: the
    /// waits between attempts after failures without `Retry-After` grow (the later half of the
    /// streak waits `backoffGrowthFactor` times the earlier half at least), and the client does
    /// not hammer (more than `hammeringAttemptsPerSecond` over the streak). Jitter is reported:
    /// the steps where a wait shrank.
    func backoff() -> VerdictCheck {
        var evidence: [VerdictEvidence] = []
        var failures: [String] = []
        var judged = 0
        var worstGrowth = Double.infinity, fastest = 0.0, shrank = 0, steps = 0
        for streak in streaks() where streak.waits.count >= 2 {
            judged += 1
            let half = streak.waits.count / 2
            let earlier = streak.waits.prefix(half), later = streak.waits.suffix(streak.waits.count - half)
            let earlierMean = Double(earlier.reduce(0, +)) / Double(earlier.count)
            let laterMean = Double(later.reduce(0, +)) / Double(later.count)
            let growth = earlierMean > 0 ? laterMean / earlierMean : (laterMean > 0 ? .infinity : 1)
            let first = attempts[streak.indices.first!], last = attempts[streak.indices.last!]
            let span = Double(max(1, last.time - first.time)) / 1000
            let rate = Double(streak.indices.count - 1) / span
            for (a, b) in zip(streak.waits, streak.waits.dropFirst()) {
                steps += 1
                if b < a { shrank += 1 }
            }
            worstGrowth = min(worstGrowth, growth)
            fastest = max(fastest, rate)
            let grows = laterMean >= earlierMean * Self.backoffGrowthFactor
                && Int64(laterMean - earlierMean) >= Self.backoffMinimumGrowthMilliseconds
            let hammers = rate > Self.hammeringAttemptsPerSecond
            let waits = streak.waits.map(Self.seconds).joined(separator: ", ")
            for (offset, index) in streak.indices.enumerated() {
                evidence.append(self.evidence(index, waited: offset == 0 ? nil : streak.waits[offset - 1]))
            }
            if !grows || hammers {
                var reason = "\(first.request): \(streak.indices.count) attempts with waits of \(waits)"
                if !grows { reason += " (not growing)" }
                if hammers { reason += ", \(Self.decimal(rate)) attempts/s" }
                failures.append(reason)
            }
        }
        var details: [(String, Double)] = []
        if judged > 0 {
            details = [("growth", worstGrowth.isFinite ? worstGrowth : 1_000_000), ("attemptsPerSecond", fastest),
                       ("shrankSteps", Double(shrank)), ("steps", Double(steps))]
        }
        guard judged > 0 else {
            return VerdictCheck(name: "backoff", passed: nil,
                                summary: "No request was retried more than once after a failure without Retry-After.",
                                details: details, evidence: evidence)
        }
        if let failure = failures.first {
            return VerdictCheck(name: "backoff", passed: false,
                                summary: "Retries did not back off: \(failure)\(failures.count > 1 ? " (and \(failures.count - 1) more)" : "").",
                                details: details, evidence: evidence)
        }
        let jitter = shrank > 0 ? "; jitter: \(shrank) of \(steps) waits were shorter than the one before" : ""
        let growth = worstGrowth.isFinite ? "\(Self.decimal(worstGrowth))x" : "from nothing"
        return VerdictCheck(name: "backoff", passed: true,
                            summary: "Retries backed off in \(Self.plural(judged, "failure streak")): waits grew \(growth) at the least, "
                                + "\(Self.decimal(fastest)) attempts/s at the most" + jitter + ".",
                            details: details, evidence: evidence)
    }

    // MARK: 3. Attempt budget

    /// How many attempts each failing request got, from its first failure to its success or the
    /// client's giving up; past `options.maxAttempts` is too many.
    func attemptBudget() -> VerdictCheck {
        var evidence: [VerdictEvidence] = []
        var most = 0, mostRun: [Int] = [], failing = 0, over: [String] = []
        for group in groups {
            var run: [Int] = []
            func close() {
                guard !run.isEmpty else { return }
                failing += 1
                if run.count > most { most = run.count; mostRun = run }
                if run.count > options.maxAttempts {
                    over.append("\(attempts[run[0]].request) got \(run.count) attempts")
                    for index in run { evidence.append(self.evidence(index)) }
                }
                run = []
            }
            // A 401 invalid_token is the token's failure, not the request's: `oneRefresh`
            // judges it (parallel requests refused together are not attempts of one request).
            for index in group where !attempts[index].invalidToken {
                let attempt = attempts[index]
                let failed = attempt.failedTransiently || attempt.isFinalClientError
                if failed || !run.isEmpty { run.append(index) }
                if !failed { close() }
            }
            close()
        }
        let details: [(String, Double)] = [("mostAttempts", Double(most)), ("maxAttempts", Double(options.maxAttempts))]
        guard failing > 0 else {
            return VerdictCheck(name: "attemptBudget", passed: nil, summary: "No request failed.", details: details, evidence: evidence)
        }
        if !over.isEmpty {
            return VerdictCheck(name: "attemptBudget", passed: false,
                                summary: "\(over[0]), past the budget of \(options.maxAttempts)\(over.count > 1 ? " (and \(over.count - 1) more)" : "").",
                                details: details, evidence: evidence)
        }
        return VerdictCheck(name: "attemptBudget", passed: true,
                            summary: "\(Self.plural(failing, "failing request")) got \(most) attempt\(most == 1 ? "" : "s") at the most "
                                + "(\(attempts[mostRun[0]].request)), within the budget of \(options.maxAttempts).",
                            details: details, evidence: mostRun.map { self.evidence($0) })
    }
}
