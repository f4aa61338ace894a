import MishapSupport

/// A rate limit (`quota:` on a rule or an endpoint): at most `limit` requests per window,
/// counted per session or per the value of a header or query parameter. Past it the request
/// gets 429 with `Retry-After` (the time until the window frees a slot) instead of its answer;
/// every answer carries the rate-limit headers clients read.
public struct Quota: Sendable {
    /// What the requests are counted by.
    public enum Key: Sendable, Equatable {
        /// The session header's value (one count for requests without it).
        case session
        /// A request value, such as `headers.X-API-Key` (one count for requests without it).
        case value(ValueSource)
    }

    /// The rate-limit headers sent with answers.
    public enum HeaderStyle: String, Sendable, CaseIterable {
        /// `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds): the fields of
        /// the IETF draft's earlier versions, which most clients and API gateways use.
        case classic
        /// `RateLimit-Policy: "default";q=5;w=10` and `RateLimit: "default";r=0;t=7`: the
        /// structured fields of draft-ietf-httpapi-ratelimit-headers-09 and later.
        case draft
        /// None: only `Retry-After` on a refusal.
        case none
    }

    public let limit: Int
    public let windowMilliseconds: Int
    public let key: Key
    /// `Retry-After` as an HTTP-date rather than seconds.
    public let retryAfterDate: Bool
    public let headerStyle: HeaderStyle
    /// The answer past the limit, instead of the JSON 429 (`Retry-After` and the rate-limit
    /// headers are added unless it declares them).
    public let exceeded: ResponseTemplate?
    public let counter: QuotaCounter

    /// The rule an endpoint's quota refusals are journaled under (`?rule=quota` finds them); a
    /// rule's quota refusals carry that rule's name.
    public static let endpointRuleName = "quota"

    public init(limit: Int, windowMilliseconds: Int, key: Key = .session, retryAfterDate: Bool = false,
                headerStyle: HeaderStyle = .classic, exceeded: ResponseTemplate? = nil, counter: QuotaCounter = QuotaCounter()) {
        self.limit = max(1, limit)
        self.windowMilliseconds = max(1, windowMilliseconds)
        self.key = key
        self.retryAfterDate = retryAfterDate
        self.headerStyle = headerStyle
        self.exceeded = exceeded
        self.counter = counter
    }

    /// Counts the request. Nil with `headers` to add to its answer when it fits; the refusal
    /// when it does not.
    func take(_ context: inout MatchContext, headers: inout [Field]) -> ResponsePlan? {
        let countedBy: String?
        switch key {
        case .session: countedBy = context.session
        case .value(let source): countedBy = context.value(of: source)
        }
        let decision = counter.take(key: countedBy, limit: limit, window: Int64(windowMilliseconds), now: context.now,
                                    keyLimit: context.maxSessions)
        switch decision {
        case .allowed(let remaining, let reset):
            headers = rateLimitHeaders(remaining: remaining, resetMilliseconds: reset)
            return nil
        case .refused(let retry):
            return refusal(retryMilliseconds: retry, &context)
        }
    }

    private func refusal(retryMilliseconds retry: Int64, _ context: inout MatchContext) -> ResponsePlan {
        let seconds = Int((retry + 999) / 1000)
        let retryAfter: String
        if retryAfterDate {
            let ready = WallClock.nowMilliseconds() + retry
            retryAfter = WallClock.httpDate(secondsSinceEpoch: Int((ready + 999) / 1000))
        } else {
            retryAfter = String(seconds)
        }
        var plan: ResponsePlan
        if let exceeded {
            plan = exceeded.plan(context: &context, random: context.random)
        } else {
            plan = .error(429, reason: "Too many requests: at most \(limit) per \(Self.shown(milliseconds: windowMilliseconds)); "
                + "a request fits again in \(seconds) s")
        }
        plan.prepared = nil
        let declared = Set(plan.headers.map { $0.name.lowercased() })
        var added: [Field] = declared.contains("retry-after") ? [] : [Field("Retry-After", retryAfter)]
        added += rateLimitHeaders(remaining: 0, resetMilliseconds: retry).filter { !declared.contains($0.name.lowercased()) }
        plan.headers += added
        return plan
    }

    func rateLimitHeaders(remaining: Int, resetMilliseconds: Int64) -> [Field] {
        let reset = String(max(0, (resetMilliseconds + 999) / 1000))
        switch headerStyle {
        case .classic:
            return [Field("RateLimit-Limit", String(limit)), Field("RateLimit-Remaining", String(remaining)),
                    Field("RateLimit-Reset", reset)]
        case .draft:
            let window = (windowMilliseconds + 999) / 1000
            return [Field("RateLimit-Policy", "\"default\";q=\(limit);w=\(window)"),
                    Field("RateLimit", "\"default\";r=\(remaining);t=\(reset)")]
        case .none:
            return []
        }
    }

    /// `10 s`, `1.5 s`, `250 ms`.
    static func shown(milliseconds: Int) -> String {
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000) s" }
        if milliseconds > 1000 { return "\(Double(milliseconds) / 1000) s" }
        return "\(milliseconds) ms"
    }
}
