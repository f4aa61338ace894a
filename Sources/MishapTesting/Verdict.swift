import Foundation

/// How a session's client handled the failures it met: the checks of `GET /__mishap/verdict`,
/// typed. Times are `Date`s and waits `TimeInterval`s, in **seconds**.
///
/// ```swift
/// let verdict = try session.verdict()
/// #expect(verdict.passed, "\(verdict)")          // on failure, one sentence per check
/// #expect(verdict.retryAfter.passed == true)
/// #expect(verdict[.unsafeRetry]?.evidence.isEmpty == true)
/// ```
///
/// `passed` is false when any check is false; a check that found nothing to judge (or whose
/// evidence the journal no longer holds) has `passed == nil` and says which in its `summary`.
public struct Verdict: Sendable, CustomStringConvertible {
    /// The name of a check. The eight of today have cases; a check added to the server later
    /// comes as `.other(name)` until MishapTesting knows it.
    public enum CheckName: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// `Retry-After` honoured (RFC 9110 section 10.2.3).
        case retryAfter
        /// Repeated attempts after a failure without `Retry-After` wait longer each time, and do
        /// not hammer.
        case backoff
        /// How many attempts a failing request got, against `maxAttempts`.
        case attemptBudget
        /// A POST or PATCH whose fate the client could not know is not sent again without the
        /// same `Idempotency-Key`.
        case unsafeRetry
        /// A 4xx other than 408, 425 and 429 is not retried unchanged.
        case clientErrorRetry
        /// Several 401 `invalid_token` answers together lead to one refresh of the token.
        case oneRefresh
        /// A hung or dribbled request is given up within `giveUpWithin`.
        case giveUp
        /// A stream of events that ended is reconnected to no sooner than its `retry`, with its
        /// last id as `Last-Event-ID`.
        case reconnect
        /// A check this version of MishapTesting does not know, by its name.
        case other(String)

        /// The eight checks, in the order the server lists them.
        public static let known: [CheckName] = [.retryAfter, .backoff, .attemptBudget, .unsafeRetry, .clientErrorRetry, .oneRefresh, .giveUp,
                                                .reconnect]

        /// The name the server uses (`"retryAfter"`).
        public var rawValue: String {
            switch self {
            case .retryAfter: "retryAfter"
            case .backoff: "backoff"
            case .attemptBudget: "attemptBudget"
            case .unsafeRetry: "unsafeRetry"
            case .clientErrorRetry: "clientErrorRetry"
            case .oneRefresh: "oneRefresh"
            case .giveUp: "giveUp"
            case .reconnect: "reconnect"
            case .other(let name): name
            }
        }

        /// The case of a name the server uses; `.other` for one it does not know.
        public init(_ rawValue: String) {
            self = Self.known.first { $0.rawValue == rawValue } ?? .other(rawValue)
        }

        public init(stringLiteral value: String) {
            self.init(value)
        }

        public var description: String { rawValue }

        public static func == (lhs: CheckName, rhs: CheckName) -> Bool { lhs.rawValue == rhs.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
    }

    /// One journal entry a check is based on.
    public struct Evidence: Sendable, CustomStringConvertible {
        /// The journal id of the request (`GET /__mishap/requests`).
        public let id: UInt64
        /// When the request came.
        public let at: Date
        /// `METHOD /path?query`.
        public let request: String
        /// What it was answered: a status (`"503"`), a fault (`"reset"`) or `"hang"`.
        public let answer: String
        /// The rule that answered, if any.
        public let rule: String?
        /// Seconds the client waited before this attempt, to the millisecond, when the check
        /// measured it.
        public let waited: TimeInterval?
        /// What the check noticed (`"Retry-After: 17; came back 14 s early"`).
        public let note: String?

        public init(id: UInt64, at: Date, request: String, answer: String, rule: String?, waited: TimeInterval?, note: String?) {
            self.id = id
            self.at = at
            self.request = request
            self.answer = answer
            self.rule = rule
            self.waited = waited
            self.note = note
        }

        /// `#3 GET /isUserNameAvailable?userName=maintenance -> 500 (maintenance), waited 3.004 s: NOTE`.
        public var description: String {
            var text = "#\(id) \(request) -> \(answer)"
            if let rule { text += " (\(rule))" }
            if let waited { text += ", waited \(Verdict.seconds(waited))" }
            if let note { text += ": \(note)" }
            return text
        }
    }

    /// One check: its name, whether it passed (nil: nothing to judge, or the evidence was
    /// lost), its sentence, its numbers and the requests it is based on.
    public struct Check: Sendable, CustomStringConvertible {
        public let name: CheckName
        /// True or false; nil when nothing happened that it could judge, or its evidence was lost.
        public let passed: Bool?
        /// One sentence a person reads.
        public let summary: String
        /// The check's numbers (`growthFactor`, `attempts`, ...), in the server's order.
        public let details: [(name: String, value: Double)]
        /// The journal entries the check is based on, oldest first.
        public let evidence: [Evidence]

        public init(name: CheckName, passed: Bool?, summary: String, details: [(name: String, value: Double)] = [], evidence: [Evidence] = []) {
            self.name = name
            self.passed = passed
            self.summary = summary
            self.details = details
            self.evidence = evidence
        }

        /// A number of `details` by its name.
        public func detail(_ name: String) -> Double? {
            details.first { $0.name == name }?.value
        }

        /// `✗ retryAfter: SUMMARY` (`✓` passed, `✗` failed, `-` nothing to judge).
        public var description: String {
            "\(passed == true ? "✓" : passed == false ? "✗" : "-") \(name): \(summary)"
        }
    }

    /// The session judged; nil for the requests that carried none.
    public let session: String?
    /// False when any check is false.
    public let passed: Bool
    /// The endpoint the verdict was limited to (`GET /isUserNameAvailable`), or nil for all.
    public let endpoint: String?
    /// How many requests were judged.
    public let attempts: Int
    /// How attempts were grouped into "the same request", in one sentence.
    public let grouping: String
    /// The attempt budget `attemptBudget` judged against.
    public let maxAttempts: Int
    /// The limit `giveUp` judged against, in seconds.
    public let giveUpWithin: TimeInterval
    /// Every check, in the server's order.
    public let checks: [Check]

    public init(session: String?, passed: Bool, endpoint: String?, attempts: Int, grouping: String,
                maxAttempts: Int, giveUpWithin: TimeInterval, checks: [Check]) {
        self.session = session
        self.passed = passed
        self.endpoint = endpoint
        self.attempts = attempts
        self.grouping = grouping
        self.maxAttempts = maxAttempts
        self.giveUpWithin = giveUpWithin
        self.checks = checks
    }

    /// The check of that name, nil when the server gave none.
    public subscript(name: CheckName) -> Check? {
        checks.first { $0.name == name }
    }

    /// The checks that failed.
    public var failures: [Check] { checks.filter { $0.passed == false } }

    public var retryAfter: Check { check(.retryAfter) }
    public var backoff: Check { check(.backoff) }
    public var attemptBudget: Check { check(.attemptBudget) }
    public var unsafeRetry: Check { check(.unsafeRetry) }
    public var clientErrorRetry: Check { check(.clientErrorRetry) }
    public var oneRefresh: Check { check(.oneRefresh) }
    public var giveUp: Check { check(.giveUp) }

    private func check(_ name: CheckName) -> Check {
        self[name] ?? Check(name: name, passed: nil, summary: "the server gave no \(name) check")
    }

    /// What `#expect(verdict.passed, "\(verdict)")` prints: a head line, then one line per check
    /// with its sentence, and under a failed check the requests it is based on.
    public var description: String {
        var lines = ["verdict of \(session.map { "session \($0)" } ?? "the requests without a session")"
            + (endpoint.map { " on \($0)" } ?? "") + ": \(passed ? "passed" : "FAILED") (\(attempts) requests; "
            + "at most \(maxAttempts) attempts, give up within \(Self.seconds(giveUpWithin)))"]
        for check in checks {
            lines.append("  \(check)")
            if check.passed == false {
                lines += check.evidence.prefix(Self.evidenceShown).map { "      \($0)" }
                if check.evidence.count > Self.evidenceShown {
                    lines.append("      ... and \(check.evidence.count - Self.evidenceShown) more")
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The evidence a failed check prints at most in `description`.
    static let evidenceShown = 6

    /// `3.004 s`, `60 s`.
    static func seconds(_ value: TimeInterval) -> String {
        let milliseconds = (value * 1000).rounded()
        if milliseconds.truncatingRemainder(dividingBy: 1000) == 0 { return "\(Int64(milliseconds / 1000)) s" }
        return String(format: "%.3f s", milliseconds / 1000)
    }
}

// MARK: The JSON of GET /__mishap/verdict

extension Verdict: Decodable {
    /// Reads the answer of `GET /__mishap/verdict` (a server in another process, `mishap serve`).
    public init(json: Data) throws {
        self = try JSONDecoder().decode(Verdict.self, from: json)
    }

    private enum Keys: String, CodingKey {
        case session, passed, endpoint, attempts, grouping, limits, checks
        case maxAttempts, giveUpWithinMs
        case name, summary, details, evidence
        case id, at, request, answer, rule, waitedMs, note
    }

    /// A key of `details`, whatever its name.
    private struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: Decoder) throws {
        let root = try decoder.container(keyedBy: Keys.self)
        let limits = try root.nestedContainer(keyedBy: Keys.self, forKey: .limits)
        var checks: [Check] = []
        var list = try root.nestedUnkeyedContainer(forKey: .checks)
        while !list.isAtEnd {
            let check = try list.nestedContainer(keyedBy: Keys.self)
            var details: [(name: String, value: Double)] = []
            if check.contains(.details), try !check.decodeNil(forKey: .details) {
                let numbers = try check.nestedContainer(keyedBy: AnyKey.self, forKey: .details)
                // JSON objects keep no order for the decoder: by name, to be repeatable.
                for key in numbers.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                    if let value = try? numbers.decode(Double.self, forKey: key) { details.append((key.stringValue, value)) }
                }
            }
            var evidence: [Evidence] = []
            var entries = try check.nestedUnkeyedContainer(forKey: .evidence)
            while !entries.isAtEnd {
                let entry = try entries.nestedContainer(keyedBy: Keys.self)
                let at = try entry.decode(String.self, forKey: .at)
                guard let date = Self.date(at) else {
                    throw DecodingError.dataCorruptedError(forKey: .at, in: entry, debugDescription: "not an ISO 8601 time: \(at)")
                }
                evidence.append(Evidence(
                    id: try entry.decode(UInt64.self, forKey: .id), at: date,
                    request: try entry.decode(String.self, forKey: .request), answer: try entry.decode(String.self, forKey: .answer),
                    rule: try entry.decodeIfPresent(String.self, forKey: .rule),
                    waited: try entry.decodeIfPresent(Int64.self, forKey: .waitedMs).map { Double($0) / 1000 },
                    note: try entry.decodeIfPresent(String.self, forKey: .note)))
            }
            checks.append(Check(name: CheckName(try check.decode(String.self, forKey: .name)),
                                passed: try check.decodeIfPresent(Bool.self, forKey: .passed),
                                summary: try check.decode(String.self, forKey: .summary), details: details, evidence: evidence))
        }
        self.init(session: try root.decodeIfPresent(String.self, forKey: .session),
                  passed: try root.decode(Bool.self, forKey: .passed),
                  endpoint: try root.decodeIfPresent(String.self, forKey: .endpoint),
                  attempts: try root.decode(Int.self, forKey: .attempts),
                  grouping: try root.decode(String.self, forKey: .grouping),
                  maxAttempts: try limits.decode(Int.self, forKey: .maxAttempts),
                  giveUpWithin: Double(try limits.decode(Int64.self, forKey: .giveUpWithinMs)) / 1000,
                  checks: checks)
    }

    /// `2026-11-27T16:00:00.123Z` (or without the milliseconds).
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
