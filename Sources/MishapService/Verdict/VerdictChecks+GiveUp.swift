import MishapSupport

/// The check of a client's giving up on an answer that hangs or dribbles.
extension VerdictChecks {
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
