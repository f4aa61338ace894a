import MishapSupport

/// The checks of what a client may send again: not a request whose fate it cannot know
/// without its `Idempotency-Key`, not a client error unchanged.
extension VerdictChecks {
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
}
