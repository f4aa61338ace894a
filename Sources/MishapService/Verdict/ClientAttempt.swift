import MishapEngine
import MishapSupport

/// One request of a client as the verdict needs it: what was asked, what was answered, and how
/// the exchange ended. Kept per session by `ClientHistory`, apart from the journal (whose ring
/// is shared by every session and lets entries go), and small: values the checks compare are
/// kept as hashes, and the request's text for showing is cut short.
struct ClientAttempt: Sendable {
    /// The journal's id of the request (or the history's own, when the journal is off).
    var id: UInt64
    /// When the request arrived, in milliseconds since 1970, in the session's time (moved by
    /// `POST /__mishap/clock`).
    var time: Int64
    var method: String
    /// The path and query as sent, kept for showing (`request`); when longer than
    /// `requestTextLimit` bytes, the path cut short and no query, so that what a session keeps
    /// is bounded whatever its clients send.
    var path: String
    var query: [Field]
    /// Same method, path with its query, and body: the same request (a retry of it).
    var requestHash: Int
    /// The `Authorization` and `Cookie` headers as sent (0 when neither): a retry with other
    /// credentials is not the same request unchanged.
    var credentialsHash: Int
    /// The `Idempotency-Key` header as sent (hashed), nil when absent.
    var idempotencyKey: Int?
    /// For a refresh grant (`grant_type=refresh_token` in a form or JSON body): the refresh
    /// token it used (hashed); nil for any other request.
    var refreshToken: Int?
    var endpoint: String?
    var rule: String?
    /// The status sent; nil for a fault or a hang, which send none.
    var status: Int?
    var fault: Fault?
    var hang: Bool
    var dribble: Bool
    var delayMilliseconds: Int
    /// The `Retry-After` header as sent.
    var retryAfter: String?
    /// A 401 whose `WWW-Authenticate` says `invalid_token` (RFC 6750, section 3.1).
    var invalidToken: Bool
    /// From the request's arrival to the server being done with it, for the attempts the
    /// history follows to their end (hangs, dribbles, delays); nil while not known.
    var durationMilliseconds: Int64?
    /// The client closed the connection before the answer was complete.
    var closedEarly = false
    /// For an answer that was a stream of events: what it sent, once it is over.
    var eventStream: StreamSent?
    /// The `Last-Event-ID` header as sent (cut to `requestTextLimit` bytes), if it was.
    var lastEventID: String?

    /// What a stream of events sent, for the `reconnect` check.
    struct StreamSent: Sendable {
        /// False while the stream is going on.
        var over = false
        var lastEventID: String?
        var retryMilliseconds: Int?
    }

    static let requestTextLimit = 256

    /// `METHOD /path?query`, for showing.
    var request: String {
        var text = method + " " + path
        if !query.isEmpty {
            text += "?" + query.map { $0.value.isEmpty ? $0.name : $0.name + "=" + $0.value }.joined(separator: "&")
        }
        return text
    }

    /// Whether the client cannot know whether the server acted on the request: the connection
    /// failed after the request was sent, or a 500, 502 or 504 came without `Retry-After`.
    var fateUnknown: Bool {
        if fault != nil || hang || closedEarly { return true }
        guard let status, retryAfter == nil else { return false }
        return status == 500 || status == 502 || status == 504
    }

    /// Whether the exchange failed: a fault, a hang, a client that left, or a status of 408,
    /// 425, 429 or 5xx (the answers a client may try again after).
    var failedTransiently: Bool {
        if fault != nil || hang || closedEarly { return true }
        guard let status else { return false }
        return status >= 500 || status == 408 || status == 425 || status == 429
    }

    /// A 4xx the client should not send again unchanged (RFC 9110, section 15.5): every one but
    /// 408 (Request Timeout), 425 (Too Early) and 429 (Too Many Requests, RFC 6585).
    var isFinalClientError: Bool {
        guard let status, fault == nil, !hang, status >= 400, status < 500 else { return false }
        return status != 408 && status != 425 && status != 429
    }

    /// The answer for showing: the status, the fault, or `hang`.
    var answer: String {
        if let fault { return fault.rawValue }
        if hang { return "hang" }
        return status.map(String.init) ?? "-"
    }

    /// When the client had the whole answer (or the connection's end), in session time; nil
    /// for an exchange still going on.
    var end: Int64? {
        if let durationMilliseconds { return time + durationMilliseconds }
        if hang || dribble { return nil }
        return time + Int64(delayMilliseconds)
    }

    /// Whether the server follows this exchange to its end to note how long it lasted.
    var followedToEnd: Bool { hang || dribble || delayMilliseconds > 0 || eventStream != nil }

    /// Whether an answer can bear on no check unless the session met a failure before: a
    /// status under 400, sent at once and whole (not a stream of events), to a request that is not
    /// a refresh grant.
    /// A session's history starts at its first answer that is not (`ClientHistory`).
    static func isUneventful(_ request: Request, _ plan: ResponsePlan) -> Bool {
        plan.status < 400 && plan.fault == nil && !plan.hang && plan.dribble == nil && plan.delayMilliseconds == 0
            && plan.stream == nil && !mayBeRefreshGrant(request)
    }

    /// A POST whose body mentions `refresh_token`: only such a body is read as a form or JSON.
    static func mayBeRefreshGrant(_ request: Request) -> Bool {
        request.method == "POST" && request.body.count >= 13
            && request.body.withUnsafeBufferPointer { Self.contains("refresh_token", in: $0) }
    }
}

extension ClientAttempt {
    /// The attempt for `request`, answered by `plan`, arriving at `time`.
    init(id: UInt64, time: Int64, request: Request, plan: ResponsePlan) {
        self.id = id
        self.time = time
        method = request.method
        var hasher = Hasher()
        hasher.combine(request.method)
        hasher.combine(request.path)
        var size = request.path.utf8.count
        for field in request.query {
            hasher.combine(field.name)
            hasher.combine(field.value)
            size += field.name.utf8.count + field.value.utf8.count + 2
        }
        hasher.combine(request.body)
        requestHash = hasher.finalize()
        if size <= Self.requestTextLimit {
            path = request.path
            query = request.query
        } else {
            path = String(decoding: request.path.utf8.prefix(Self.requestTextLimit), as: UTF8.self) + "…"
            query = []
        }
        // One pass over the headers for the three the checks compare.
        var authorization: String?, cookie: String?, key: String?
        for header in request.headers {
            switch header.name.utf8.count {
            case 13 where authorization == nil && header.name.equalsIgnoringASCIICase("Authorization"): authorization = header.value
            case 6 where cookie == nil && header.name.equalsIgnoringASCIICase("Cookie"): cookie = header.value
            case 15 where key == nil && header.name.equalsIgnoringASCIICase("Idempotency-Key"): key = header.value
            case 13 where lastEventID == nil && header.name.equalsIgnoringASCIICase("Last-Event-ID"):
                lastEventID = String(decoding: header.value.utf8.prefix(Self.requestTextLimit), as: UTF8.self)
            default: break
            }
        }
        if authorization == nil && cookie == nil {
            credentialsHash = 0
        } else {
            var credentials = Hasher()
            credentials.combine(authorization)
            credentials.combine(cookie)
            credentialsHash = credentials.finalize()
        }
        idempotencyKey = key.map { $0.hashValue }
        refreshToken = Self.refreshToken(of: request).map { $0.hashValue }
        if case .events? = plan.stream { eventStream = StreamSent() }
        endpoint = plan.bookkeeping.endpoint
        rule = plan.bookkeeping.rule
        let sent = plan.fault == nil && !plan.hang
        status = sent && plan.destination.isHere ? plan.status : nil
        fault = plan.fault
        hang = plan.hang
        dribble = plan.dribble != nil
        delayMilliseconds = plan.delayMilliseconds
        retryAfter = sent ? RetryTracker.retryAfter(in: plan.headers) : nil
        invalidToken = sent && plan.status == 401 && plan.headers.contains { header in
            header.name.equalsIgnoringASCIICase("WWW-Authenticate") && header.value.contains("invalid_token")
        }
    }

    /// The refresh token of a refresh grant (RFC 6749, section 6), nil for any other request.
    /// Bodies that do not mention `refresh_token` are not read.
    static func refreshToken(of request: Request) -> String? {
        guard mayBeRefreshGrant(request), request.bodyField("grant_type") == "refresh_token" else { return nil }
        return request.bodyField("refresh_token") ?? ""
    }

    private static func contains(_ needle: StaticString, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = needle.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        let word = UnsafeBufferPointer(start: needle.utf8Start, count: count)
        var index = 0
        while index <= bytes.count - count {
            if bytes[index] == word[0] {
                var offset = 1
                while offset < count && bytes[index + offset] == word[offset] { offset += 1 }
                if offset == count { return true }
            }
            index += 1
        }
        return false
    }
}
