import MishapSupport

/// The check of a client's reconnecting to a stream of events that ended.
extension VerdictChecks {
    // MARK: 8. Reconnects as told

    /// How much sooner than the `retry` it was given a reconnection may come: the server's end
    /// of the stream and the client's seeing it are not the same instant.
    static func reconnectSlackMilliseconds(_ retry: Int) -> Int64 {
        Int64(min(50, retry / 10))
    }

    /// Each stream of events that is over, and the next request of the session to the same
    /// endpoint (its reconnection): it must come no sooner than the last `retry:` the stream
    /// sent, after the stream's end, and carry the last `id:` it sent as `Last-Event-ID`.
    func reconnect() -> VerdictCheck {
        var evidence: [VerdictEvidence] = []
        var judged = 0, problems: [String] = []
        for (index, attempt) in attempts.enumerated() {
            guard let stream = attempt.eventStream, stream.over, let endpoint = attempt.endpoint,
                  let next = attempts[(index + 1)...].firstIndex(where: { $0.endpoint == endpoint }) else { continue }
            judged += 1
            let waited = wait(from: index, to: next)
            let reconnection = attempts[next]
            var wrong: [String] = []
            if let retry = stream.retryMilliseconds, waited < Int64(retry) - Self.reconnectSlackMilliseconds(retry) {
                wrong.append("came back after \(Self.seconds(waited)), sooner than the retry of \(Self.seconds(Int64(retry))) it was given")
            }
            if let lastID = stream.lastEventID, reconnection.lastEventID != lastID {
                wrong.append(reconnection.lastEventID.map { "sent Last-Event-ID \"\($0)\", not the last id sent, \"\(lastID)\"" }
                             ?? "sent no Last-Event-ID, though the stream's last id was \"\(lastID)\"")
            }
            var sent = "the stream sent " + (stream.lastEventID.map { "last id \"\($0)\"" } ?? "no id")
            if let retry = stream.retryMilliseconds { sent += " and retry \(Self.seconds(Int64(retry)))" }
            evidence.append(self.evidence(index, note: sent))
            if wrong.isEmpty {
                evidence.append(self.evidence(next, waited: waited, note: "reconnected as told"))
            } else {
                problems.append("\(reconnection.request) (#\(reconnection.id)) " + wrong.joined(separator: ", and "))
                evidence.append(self.evidence(next, waited: waited, note: wrong.joined(separator: "; ")))
            }
        }
        let details: [(String, Double)] = [("reconnections", Double(judged)), ("wrong", Double(problems.count))]
        if let first = problems.first {
            return VerdictCheck(name: "reconnect", passed: false,
                                summary: "\(first)\(problems.count > 1 ? " (and \(problems.count - 1) more)" : "").",
                                details: details, evidence: evidence)
        }
        guard judged > 0 else {
            return VerdictCheck(name: "reconnect", passed: nil, summary: "No stream of events ended and was reconnected to.",
                                details: details, evidence: evidence)
        }
        return VerdictCheck(name: "reconnect", passed: true,
                            summary: "The client reconnected to \(Self.plural(judged, "stream")) after the retry it was given, with the last id.",
                            details: details, evidence: evidence)
    }
}
