import MishapSupport

/// What the verdict is asked to judge, and the limits the test sets.
public struct VerdictOptions: Sendable {
    /// Only the attempts answered by this endpoint (`GET /me`); nil for all.
    public var endpoint: String?
    /// The most attempts a failing request may get (`attemptBudget`).
    public var maxAttempts: Int
    /// How long a client may wait on a hung or dribbled answer before it gives up (`giveUp`).
    public var giveUpWithinMilliseconds: Int64

    /// The default of `maxAttempts`: the first attempt and four retries.
    public static let defaultMaxAttempts = 5
    /// The default of `giveUpWithinMilliseconds`: URLSession's default request timeout.
    public static let defaultGiveUpWithinMilliseconds: Int64 = 60_000

    public init(endpoint: String? = nil, maxAttempts: Int = VerdictOptions.defaultMaxAttempts,
                giveUpWithinMilliseconds: Int64 = VerdictOptions.defaultGiveUpWithinMilliseconds) {
        self.endpoint = endpoint
        self.maxAttempts = maxAttempts
        self.giveUpWithinMilliseconds = giveUpWithinMilliseconds
    }
}

/// One request a check's judgement rests on.
public struct VerdictEvidence: Sendable, Equatable {
    /// The request's id in the journal (`GET /__mishap/requests`).
    public var id: UInt64
    /// When it arrived, in milliseconds since 1970 (in the session's time).
    public var time: Int64
    /// `METHOD /path?query`.
    public var request: String
    /// The status sent (`"503"`), the fault (`"reset"`), or `"hang"`.
    public var answer: String
    public var rule: String?
    /// How long the client waited: before this request since the previous attempt's answer, or
    /// on this request before it gave up; nil where it does not apply.
    public var waitedMilliseconds: Int64?
    public var note: String?
}

/// One check of the verdict: passed, failed, or nothing to judge (nil), in a sentence.
public struct VerdictCheck: Sendable {
    /// `retryAfter`, `backoff`, `attemptBudget`, `unsafeRetry`, `clientErrorRetry`,
    /// `oneRefresh`, `giveUp`, `reconnect`.
    public var name: String
    /// True or false, or nil when nothing happened that the check could judge (or the
    /// evidence was lost: the summary says so).
    public var passed: Bool?
    /// One sentence a person reads.
    public var summary: String
    /// Figures of the check (`growth`, `attemptsPerSecond`, `refreshes`...).
    public var details: [(name: String, value: Double)]
    public var evidence: [VerdictEvidence]

    /// The names of the checks, in the order the verdict lists them.
    public static let names = ["retryAfter", "backoff", "attemptBudget", "unsafeRetry", "clientErrorRetry", "oneRefresh", "giveUp",
                               "reconnect"]
}

/// How a session's client handled the failures it met: `GET /__mishap/verdict`.
public struct ClientVerdict: Sendable {
    /// The session judged; nil for the requests that carried none.
    public var session: String?
    /// False when any check failed.
    public var passed: Bool
    public var endpoint: String?
    /// How many attempts (requests) were judged.
    public var attempts: Int
    /// How attempts are grouped into one request and its retries, in a sentence.
    public var grouping: String
    public var options: VerdictOptions
    public var checks: [VerdictCheck]

    static let grouping = "attempts are the same request when they have the same method, path and query, and body, "
        + "in the same session; a later one is a retry of the one before it"

    /// The verdict as the admin API answers it.
    public var json: String { jsonValue.text }

    var jsonValue: JSON {
        .object([
            ("session", .optional(session)),
            ("passed", .bool(passed)),
            ("endpoint", .optional(endpoint)),
            ("attempts", .int(attempts)),
            ("grouping", .string(grouping)),
            ("limits", .object([
                ("maxAttempts", .int(options.maxAttempts)),
                ("giveUpWithinMs", .int(Int(options.giveUpWithinMilliseconds))),
            ])),
            ("checks", .array(checks.map { check in
                var members: [(String, JSON)] = [
                    ("name", .string(check.name)),
                    ("passed", check.passed.map(JSON.bool) ?? .null),
                    ("summary", .string(check.summary)),
                ]
                if !check.details.isEmpty {
                    members.append(("details", .object(check.details.map { ($0.name, Self.number($0.value)) })))
                }
                members.append(("evidence", .array(check.evidence.map { evidence in
                    var fields: [(String, JSON)] = [
                        ("id", .int(Int(evidence.id))),
                        ("at", .string(WallClock.iso8601(milliseconds: evidence.time))),
                        ("request", .string(evidence.request)),
                        ("answer", .string(evidence.answer)),
                        ("rule", .optional(evidence.rule)),
                    ]
                    if let waited = evidence.waitedMilliseconds { fields.append(("waitedMs", .int(Int(waited)))) }
                    if let note = evidence.note { fields.append(("note", .string(note))) }
                    return .object(fields)
                })))
                return .object(members)
            })),
        ])
    }

    /// Whole numbers as such, others to two decimals.
    private static func number(_ value: Double) -> JSON {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return .int(Int(value)) }
        return .double((value * 100).rounded() / 100)
    }
}
