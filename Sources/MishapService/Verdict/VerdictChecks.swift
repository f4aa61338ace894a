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
        [retryAfter(), backoff(), attemptBudget(), unsafeRetry(), clientErrorRetry(), oneRefresh(), giveUp()]
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

    // MARK: 4. No unsafe retry

    /// A request with a method that is not idempotent (POST, PATCH) whose fate the client cannot
    /// know (the connection failed after it was sent, or a 500, 502 or 504 without Retry-After)
    /// is not sent again, unless both carry the same `Idempotency-Key` (IETF httpapi draft).
    func unsafeRetry() -> VerdictCheck {
        var evidence: [VerdictEvidence] = []
        var unknown = 0, unsafe: [String] = []
        for group in groups {
            for position in group.indices {
                let index = group[position]
                let attempt = attempts[index]
                guard !Self.idempotentMethods.contains(attempt.method), attempt.fateUnknown else { continue }
                unknown += 1
                guard position + 1 < group.count else {
                    evidence.append(self.evidence(index, note: "fate unknown to the client; not sent again"))
                    continue
                }
                let retry = group[position + 1]
                let key = attempt.idempotencyKey, retryKey = attempts[retry].idempotencyKey
                evidence.append(self.evidence(index, note: "fate unknown to the client"))
                if key != nil && retryKey == key {
                    evidence.append(self.evidence(retry, waited: wait(from: index, to: retry), note: "sent again with the same Idempotency-Key"))
                } else {
                    let why = key == nil ? "without an Idempotency-Key" : (retryKey == nil ? "without its Idempotency-Key" : "with a changed Idempotency-Key")
                    evidence.append(self.evidence(retry, waited: wait(from: index, to: retry), note: "sent again \(why)"))
                    unsafe.append("\(attempt.request) (#\(attempt.id), answered \(attempt.answer)) was sent again \(why) (#\(attempts[retry].id))")
                }
            }
        }
        let details: [(String, Double)] = [("fateUnknown", Double(unknown)), ("unsafeRetries", Double(unsafe.count))]
        guard unknown > 0 else {
            return VerdictCheck(name: "unsafeRetry", passed: nil,
                                summary: "No request with a method that is not idempotent met a failure that left its fate unknown.",
                                details: details, evidence: evidence)
        }
        if let first = unsafe.first {
            return VerdictCheck(name: "unsafeRetry", passed: false,
                                summary: "\(first)\(unsafe.count > 1 ? " (and \(unsafe.count - 1) more)" : "").", details: details, evidence: evidence)
        }
        return VerdictCheck(name: "unsafeRetry", passed: true,
                            summary: "\(Self.plural(unknown, "request")) that might have been acted on \(unknown == 1 ? "was" : "were") "
                                + "not sent again, or only with the same Idempotency-Key.",
                            details: details, evidence: evidence)
    }

    // MARK: 5. No retry of client errors

    /// A 4xx other than 408, 425 and 429 says the request itself is wrong (RFC 9110, section
    /// 15.5): sent again unchanged (same request, same `Authorization` and `Cookie`), it fails
    /// again. A 401 `invalid_token` is left to `oneRefresh`.
    func clientErrorRetry() -> VerdictCheck {
        var evidence: [VerdictEvidence] = []
        var errors = 0, repeated: [String] = []
        for group in groups {
            for position in group.indices {
                let index = group[position]
                let attempt = attempts[index]
                guard attempt.isFinalClientError, !attempt.invalidToken else { continue }
                errors += 1
                guard position + 1 < group.count, attempts[group[position + 1]].credentialsHash == attempt.credentialsHash else { continue }
                let retry = group[position + 1]
                evidence.append(self.evidence(index))
                evidence.append(self.evidence(retry, waited: wait(from: index, to: retry), note: "sent again unchanged after \(attempt.answer)"))
                repeated.append("\(attempt.request) was sent again unchanged after \(attempt.answer) (#\(attempt.id), then #\(attempts[retry].id))")
            }
        }
        let details: [(String, Double)] = [("clientErrors", Double(errors)), ("retriedUnchanged", Double(repeated.count))]
        guard errors > 0 else {
            return VerdictCheck(name: "clientErrorRetry", passed: nil, summary: "No request got a 4xx other than 408, 425 and 429.",
                                details: details, evidence: evidence)
        }
        if let first = repeated.first {
            return VerdictCheck(name: "clientErrorRetry", passed: false,
                                summary: "\(first)\(repeated.count > 1 ? " (and \(repeated.count - 1) more)" : "").", details: details, evidence: evidence)
        }
        return VerdictCheck(name: "clientErrorRetry", passed: true,
                            summary: "\(Self.plural(errors, "client error")) (4xx) \(errors == 1 ? "was" : "were") not retried unchanged.",
                            details: details, evidence: evidence)
    }

    // MARK: 6. One refresh

    /// Requests answered 401 with `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750,
    /// section 3.1) with the same credentials form one burst: the client refreshes its token
    /// once for the burst (one request with `grant_type=refresh_token`, RFC 6749 section 6),
    /// sends the expired token no more once the refresh is answered (a second after, for
    /// requests already on their way), and never sends a refresh token twice.
    func oneRefresh() -> VerdictCheck {
        var evidence: [VerdictEvidence] = []
        // The bursts, by credentials, in the order of their first 401.
        var bursts: [(credentials: Int, first: Int, members: [Int])] = []
        for (index, attempt) in attempts.enumerated() where attempt.invalidToken {
            if let burst = bursts.firstIndex(where: { $0.credentials == attempt.credentialsHash }) {
                bursts[burst].members.append(index)
            } else {
                bursts.append((attempt.credentialsHash, index, [index]))
            }
        }
        let refreshes = attempts.indices.filter { attempts[$0].refreshToken != nil }
        var problems: [String] = []
        var seenTokens: [Int: Int] = [:]
        for index in refreshes {
            let token = attempts[index].refreshToken!
            if let earlier = seenTokens[token] {
                problems.append("the refresh token of #\(attempts[earlier].id) was sent again (#\(attempts[index].id))")
                evidence.append(self.evidence(index, note: "a refresh token already used"))
            } else {
                seenTokens[token] = index
            }
        }
        var judged = 0, most = 0, retriedWithNew = 0, failedRequests = 0
        for (position, burst) in bursts.enumerated() {
            let start = attempts[burst.first].time
            let nextStart = position + 1 < bursts.count ? bursts[position + 1].first : attempts.count
            let own = refreshes.filter { $0 > burst.first && $0 < nextStart && attempts[$0].time >= start }
            for index in burst.members { evidence.append(self.evidence(index, note: "401 invalid_token")) }
            for index in own { evidence.append(self.evidence(index, note: "refresh")) }
            guard let firstRefresh = own.first else { continue }
            judged += 1
            most = max(most, own.count)
            if own.count > 1 {
                problems.append("\(Self.plural(burst.members.count, "request")) got 401 invalid_token and the client refreshed \(own.count) times")
            }
            // After the refresh was answered, the expired token is not sent again; each request
            // that got the 401 is sent again with other credentials.
            // Requests the client sent before it had the new token may arrive just after the
            // refresh was answered: only those more than `staleTokenGraceMilliseconds` later count.
            let refreshed = (attempts[firstRefresh].end ?? attempts[firstRefresh].time) + Self.staleTokenGraceMilliseconds
            if let stale = attempts.indices.first(where: { attempts[$0].time > refreshed && attempts[$0].credentialsHash == burst.credentials
                && attempts[$0].refreshToken == nil }) {
                problems.append("the expired token was sent again after the refresh (#\(attempts[stale].id))")
                evidence.append(self.evidence(stale, note: "the expired token, after the refresh"))
            }
            var retriedGroups: Set<Int> = []
            for index in burst.members where !retriedGroups.contains(attempts[index].requestHash) {
                failedRequests += 1
                if attempts.indices.contains(where: { $0 > firstRefresh && attempts[$0].requestHash == attempts[index].requestHash
                    && attempts[$0].credentialsHash != burst.credentials }) {
                    retriedGroups.insert(attempts[index].requestHash)
                    retriedWithNew += 1
                }
            }
        }
        let details: [(String, Double)] = [("bursts", Double(bursts.count)), ("refreshes", Double(refreshes.count)),
                                           ("mostRefreshesPerBurst", Double(most)), ("retriedWithNewToken", Double(retriedWithNew))]
        if !problems.isEmpty {
            return VerdictCheck(name: "oneRefresh", passed: false,
                                summary: problems[0].prefix(1).uppercased() + problems[0].dropFirst()
                                    + (problems.count > 1 ? " (and \(problems.count - 1) more problems)." : "."),
                                details: details, evidence: evidence)
        }
        guard judged > 0 else {
            let summary = bursts.isEmpty ? "No request got a 401 invalid_token."
                : "\(Self.plural(bursts.reduce(0) { $0 + $1.members.count }, "request")) got a 401 invalid_token and no refresh followed."
            return VerdictCheck(name: "oneRefresh", passed: nil, summary: summary, details: details, evidence: evidence)
        }
        return VerdictCheck(name: "oneRefresh", passed: true,
                            summary: "The client refreshed once per expired token (\(Self.plural(judged, "time"))) "
                                + "and sent \(retriedWithNew) of \(failedRequests) refused requests again with the new token.",
                            details: details, evidence: evidence)
    }

    // MARK: 7. Gives up on a hang

    /// A request whose answer hung or dribbled: how long the client waited before it closed the
    /// connection; waiting past `options.giveUpWithinMilliseconds` is never giving up.
    func giveUp() -> VerdictCheck {
        var evidence: [VerdictEvidence] = []
        var gaveUp = 0, completed = 0, tooLong: [String] = []
        let limit = options.giveUpWithinMilliseconds
        for (index, attempt) in attempts.enumerated() where attempt.hang || attempt.dribble {
            let kind = attempt.hang ? "hung" : "dribbled"
            if let duration = attempt.durationMilliseconds {
                if attempt.closedEarly {
                    if duration <= limit {
                        gaveUp += 1
                        evidence.append(self.evidence(index, waited: duration, note: "\(kind); the client gave up after \(Self.seconds(duration))"))
                    } else {
                        tooLong.append("\(attempt.request) (#\(attempt.id), \(kind)) was given up on only after \(Self.seconds(duration))")
                        evidence.append(self.evidence(index, waited: duration, note: "\(kind); given up on after \(Self.seconds(duration))"))
                    }
                } else if duration > limit {
                    tooLong.append("\(attempt.request) (#\(attempt.id), \(kind)) was waited on for \(Self.seconds(duration)), to its end")
                    evidence.append(self.evidence(index, waited: duration, note: "\(kind); the client waited to the end"))
                } else if attempt.dribble {
                    completed += 1
                    evidence.append(self.evidence(index, waited: duration, note: "dribbled; the whole answer came in \(Self.seconds(duration))"))
                } else {
                    evidence.append(self.evidence(index, waited: duration, note: "hung; the server ended it after \(Self.seconds(duration))"))
                }
            } else {
                let open = max(0, now - attempt.time)
                if open > limit {
                    tooLong.append("\(attempt.request) (#\(attempt.id), \(kind)) is still waited on after \(Self.seconds(open))")
                    evidence.append(self.evidence(index, waited: open, note: "\(kind); still waited on"))
                } else {
                    evidence.append(self.evidence(index, waited: open, note: "\(kind); still waited on, within the limit so far"))
                }
            }
        }
        let details: [(String, Double)] = [("gaveUp", Double(gaveUp)), ("tooLong", Double(tooLong.count)),
                                           ("giveUpWithinMs", Double(limit))]
        if let first = tooLong.first {
            return VerdictCheck(name: "giveUp", passed: false,
                                summary: "\(first), past the limit of \(Self.seconds(limit))\(tooLong.count > 1 ? " (and \(tooLong.count - 1) more)" : "").",
                                details: details, evidence: evidence)
        }
        guard gaveUp + completed > 0 else {
            let summary = evidence.isEmpty ? "No answer hung or dribbled." : "No hung or dribbled request has ended yet, and none is past the limit."
            return VerdictCheck(name: "giveUp", passed: nil, summary: summary, details: details, evidence: evidence)
        }
        var summary = "The client gave up on \(Self.plural(gaveUp, "hung or dribbled request")) within \(Self.seconds(limit))"
        if completed > 0 { summary += ", and received \(Self.plural(completed, "dribbled answer")) whole within it" }
        return VerdictCheck(name: "giveUp", passed: true, summary: summary + ".", details: details, evidence: evidence)
    }
}
