import MishapSupport

/// What the server must send for one request, decided by the engine.
public struct ResponsePlan: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Response headers in order; the server adds `Date` and `Content-Length` itself.
    public var headers: [Field]
    /// The complete body (not sent for `HEAD`); for the `garbage` fault, the bytes sent instead
    /// of a response.
    public var body: [UInt8]
    /// Milliseconds to wait before answering (0: at once).
    public var delayMilliseconds: Int
    /// Never answer: hold the connection until the client gives up or the server stops.
    public var hang: Bool
    /// Send the body in pieces over time.
    public var dribble: Dribble?
    /// Break the connection instead of, or while, answering.
    public var fault: Fault?
    /// The endpoint that matched, as written in its scenario (`GET /login`), if any.
    public var endpoint: String?
    /// The name of the rule that answered, if any.
    public var rule: String?
    /// Set when the response is the same for every request: the server may send its
    /// ready-made form instead of building one from the fields above.
    public var prepared: PreparedResponse?
    /// Something wrong with the response the rule asked for, which the server logs as a warning
    /// when it carries the plan out (headers over `ResponseHead.maximumHeaderBytes`, answered 500).
    public var warning: String?
    /// The state changes the answering rule made, for the journal.
    public var stateChanges: [StateChange] = []
    /// The runtime entry (`r3`) whose rule answered, when one did.
    public var runtimeRule: String?
    /// A remark for the request's log line: why no rule answered, in brief.
    public var note: String?
    /// A number the responder gives the plan to be told, with it, when the server is done with
    /// the request (`RequestObserver.finished`; 0: not told). The service gives its journal
    /// entry's id, to note how long the request took.
    public var completionTag: UInt64 = 0
    /// Set when the answer is an upstream server's (`--upstream`, or a rule's `proxy`): the
    /// base URL the request is sent on to. The server then asks its responder to `forward` the
    /// request and carries out the plan that comes back instead of this one, which the
    /// responder builds from the upstream's answer and this plan's delivery (`headers`,
    /// `delayMilliseconds`, `dribble`, `fault`).
    public var upstream: String?
    /// The memory budget's share an upstream's answer holds (`--upstream-memory`): the server
    /// keeps it, and the body, uncopied, until the response's last byte is sent.
    public var heldMemory: MemoryLease? = nil

    /// The `upstream` of a rule with `proxy: upstream`: the server Mishap was started with,
    /// which the engine does not know; the service puts its URL in its place.
    public static let serverUpstream = "upstream:"
}

extension ResponsePlan {
    /// A plan with the given parts and nothing else set.
    ///
    /// It hands its arguments to the memberwise initializer the compiler writes, rather than
    /// assigning them one by one. With Swift 6.3, an initializer that assigns `self.x = x` builds
    /// the value on the stack and then copies it out and destroys the original: each of the
    /// plan's dozen references retained and released once more, on every request. The
    /// memberwise initializer builds the value in place.
    public init(
        status: Int, headers: [Field] = [], body: [UInt8] = [],
        delayMilliseconds: Int = 0, hang: Bool = false, dribble: Dribble? = nil, fault: Fault? = nil,
        endpoint: String? = nil, rule: String? = nil, upstream: String? = nil, stateChanges: [StateChange] = []
    ) {
        self.init(status: status, headers: headers, body: body, delayMilliseconds: delayMilliseconds, hang: hang,
                  dribble: dribble, fault: fault, endpoint: endpoint, rule: rule, prepared: nil, warning: nil,
                  stateChanges: stateChanges, runtimeRule: nil, note: nil, completionTag: 0, upstream: upstream)
    }
}

extension ResponsePlan {
    /// An error Mishap itself answers (no endpoint, a body or headers too large, an admin call
    /// gone wrong): `{"error":true,"reason":"..."}` as JSON, with any extra headers after.
    public static func error(_ status: Int, reason: String, headers extra: [Field] = []) -> ResponsePlan {
        ResponsePlan(status: status, headers: [Field("Content-Type", "application/json; charset=utf-8")] + extra,
                     body: ErrorBody.json(reason: reason))
    }
}
