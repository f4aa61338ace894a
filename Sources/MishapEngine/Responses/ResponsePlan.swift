import MishapSupport

/// What the server must send for one request, decided by the engine: the response (status,
/// headers, body) and how it is delivered (delay, hang, dribble, fault), where it comes from
/// (`destination`: answered here, or an upstream's answer), and what the journal and the log are
/// told of it (`bookkeeping`).
public struct ResponsePlan: Sendable {
    /// The HTTP status code. Not read for a plan whose `destination` is an upstream: its answer
    /// brings its own.
    public var status: Int
    /// Response headers in order; the server adds `Date` and `Content-Length` itself. For a
    /// plan sent on to an upstream, the headers put on top of its answer's.
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
    /// Set when the response is the same for every request: the server may send its
    /// ready-made form instead of building one from the fields above.
    public var prepared: PreparedResponse?
    /// Where the answer comes from: this plan, or an upstream server the request is sent on to
    /// (see `Destination`).
    public var destination: Destination
    /// What the journal and the request log are told of the answer: the endpoint and rule that
    /// gave it, the state they changed, remarks, the completion tag.
    public var bookkeeping: Bookkeeping
    /// The memory budget's share an upstream's answer holds (`--upstream-memory`): the server
    /// keeps it, and the body, uncopied, until the response's last byte is sent.
    public var heldMemory: MemoryLease? = nil
    /// The network profile the answering rule or its endpoint declares (`network:` in its
    /// scenario file), set by the engine; the service decides which profile applies (a
    /// session's own comes first) and draws `network` from it.
    public var declaredNetwork: NetworkProfile? = nil
    /// What a network profile does to this answer on the socket (bandwidth, a reset after N
    /// bytes, a slow close); nil: nothing. Its latency is already in `delayMilliseconds` and a
    /// reset before any byte in `fault`.
    public var network: NetworkShaping? = nil
    /// A stream held open instead of a body: Server-Sent Events or a WebSocket script
    /// (`events:` or `websocket:` in the response); nil for an ordinary answer.
    public var stream: StreamPlan? = nil
    /// Send the head and only this many body bytes, then break the connection (a resumable
    /// download's fault); nil: the whole body.
    public var cutAfterBytes: Int? = nil
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
        destination: Destination = .here, bookkeeping: Bookkeeping = Bookkeeping()
    ) {
        self.init(status: status, headers: headers, body: body, delayMilliseconds: delayMilliseconds, hang: hang,
                  dribble: dribble, fault: fault, prepared: nil, destination: destination, bookkeeping: bookkeeping)
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
