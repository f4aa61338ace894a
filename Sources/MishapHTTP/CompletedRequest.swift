import MishapEngine

/// A request the server has finished with: answered, faulted, or abandoned.
public struct CompletedRequest: Sendable {
    public var method: String = ""
    /// The path without the query string.
    public var path: String = ""
    /// The status sent; nil when none was (a fault, a hang, a refused or cut-short request).
    public var status: Int? = nil
    /// The rule that answered, when one did.
    public var rule: String? = nil
    /// The endpoint that answered (`GET /login`), when one did.
    public var endpoint: String? = nil
    /// The fault carried out instead of an answer, if any.
    public var fault: Fault? = nil
    /// From the request's headers arriving to the server being done with it (delays and
    /// dribbles included), in nanoseconds.
    public var durationNanoseconds: Int64 = 0
    /// The same, as a `Duration`.
    public var duration: Duration {
        get { .nanoseconds(durationNanoseconds) }
        set { durationNanoseconds = newValue.nanosecondsRoundedDown }
    }
    /// The duration in whole hundredths of a millisecond, rounded down: the request log's
    /// resolution (`durationMs=0.12`).
    public var durationHundredthsOfMillisecond: Int { Int(durationNanoseconds / 10_000) }
    /// False when the request ended early: the client left, a timeout, or the server stopped.
    public var completedNormally: Bool = true
    /// The plan's remark for the log line (why no rule answered), if any.
    public var note: String? = nil
    /// The plan's `completionTag` (0: none).
    public var completionTag: UInt64 = 0
    /// The upstream server that answered (`--upstream`), when the request was sent on to one.
    public var upstream: String? = nil
    /// True when the request's body never came whole (the client left or went quiet first), so
    /// no rule was asked and nothing answered (`RequestObserver.incomplete`).
    public var bodyIncomplete = false

    public init(method: String, path: String, status: Int?, rule: String?, endpoint: String?, fault: Fault?,
                duration: Duration, completedNormally: Bool, note: String? = nil) {
        self.init(method: method, path: path, status: status, rule: rule, endpoint: endpoint, fault: fault,
                  durationNanoseconds: duration.nanosecondsRoundedDown, completedNormally: completedNormally, note: note)
    }

    public init(method: String, path: String, status: Int?, rule: String?, endpoint: String?, fault: Fault?,
                durationNanoseconds: Int64, completedNormally: Bool, note: String? = nil, completionTag: UInt64 = 0,
                upstream: String? = nil) {
        self.method = method
        self.path = path
        self.status = status
        self.rule = rule
        self.endpoint = endpoint
        self.fault = fault
        self.durationNanoseconds = durationNanoseconds
        self.completedNormally = completedNormally
        self.note = note
        self.completionTag = completionTag
        self.upstream = upstream
    }
}

extension Duration {
    /// The whole nanoseconds of a duration (rounded toward zero).
    var nanosecondsRoundedDown: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
