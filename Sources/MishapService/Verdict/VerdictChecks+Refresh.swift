import MishapSupport

/// The check of a client's token refresh after 401 `invalid_token`.
extension VerdictChecks {
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
}
