import Foundation
import MishapService

extension MishapSession {
    /// How this session's client handled the failures it met: the checks of
    /// `GET /__mishap/verdict?session=ID`, typed. `endpoint` (`"GET /isUserNameAvailable"`)
    /// judges that endpoint's requests only; `maxAttempts` is the attempt budget (5 when nil),
    /// `giveUpWithin` how long a hung request may be waited on (60 s when nil).
    ///
    /// ```swift
    /// let verdict = try session.verdict()
    /// #expect(verdict.passed, "\(verdict)")
    /// ```
    ///
    /// Throws `MishapSessionError.noServer` for a session made on its own, and
    /// `VerdictParameterError` for a budget under 1 or a limit that is not positive.
    public func verdict(endpoint: String? = nil, maxAttempts: Int? = nil, giveUpWithin: Duration? = nil) throws -> Verdict {
        try requireServer().verdict(session: self, endpoint: endpoint, maxAttempts: maxAttempts, giveUpWithin: giveUpWithin)
    }
}

extension RunningMishap {
    /// The verdict on a session's client (nil: the requests that carried no session); see
    /// `MishapSession.verdict(endpoint:maxAttempts:giveUpWithin:)`.
    public func verdict(session: MishapSession? = nil, endpoint: String? = nil, maxAttempts: Int? = nil,
                        giveUpWithin: Duration? = nil) throws -> Verdict {
        var options = VerdictOptions()
        options.endpoint = endpoint
        if let maxAttempts {
            guard maxAttempts >= 1 else { throw VerdictParameterError("maxAttempts must be 1 or more, not \(maxAttempts)") }
            options.maxAttempts = maxAttempts
        }
        if let giveUpWithin {
            let milliseconds = Self.milliseconds(giveUpWithin)
            guard milliseconds > 0 else { throw VerdictParameterError("giveUpWithin must be 1 ms or more, not \(giveUpWithin)") }
            options.giveUpWithinMilliseconds = Int64(milliseconds)
        }
        return Verdict(service.verdict(session: session?.id, options: options))
    }
}

/// A parameter of `verdict(...)` out of its range; nothing was judged.
public struct VerdictParameterError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

extension Verdict {
    /// The server's verdict, in Dates and seconds.
    init(_ verdict: ClientVerdict) {
        self.init(
            session: verdict.session, passed: verdict.passed, endpoint: verdict.endpoint, attempts: verdict.attempts,
            grouping: verdict.grouping, maxAttempts: verdict.options.maxAttempts,
            giveUpWithin: Double(verdict.options.giveUpWithinMilliseconds) / 1000,
            checks: verdict.checks.map { check in
                Check(name: CheckName(check.name), passed: check.passed, summary: check.summary,
                      details: check.details.map { (name: $0.0, value: $0.1) },
                      evidence: check.evidence.map { entry in
                          Evidence(id: entry.id, at: Date(timeIntervalSince1970: Double(entry.time) / 1000), request: entry.request,
                                   answer: entry.answer, rule: entry.rule,
                                   waited: entry.waitedMilliseconds.map { Double($0) / 1000 }, note: entry.note)
                      })
            })
    }
}
