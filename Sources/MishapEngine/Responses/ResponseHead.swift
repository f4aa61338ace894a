/// The limit on a response's headers. libmicrohttpd writes the whole response head (the status
/// line, these headers and the few it adds itself) into each connection's fixed memory, next to
/// the request it answers; a head that does not fit closes the connection with no reply. So the
/// headers a response declares are bounded here, once for every layer: scenario files are checked
/// against it when loaded, rendered headers when a response is planned, and the server sizes each
/// connection's memory so that a head at this limit always fits beside a request at its own
/// header limit.
public enum ResponseHead {
    /// The most bytes a response's headers may take together, each counted as it is sent: its
    /// name, `: `, its value and CRLF.
    public static let maximumHeaderBytes = 8 << 10

    /// The bytes `headers` take in a response head, counted as `maximumHeaderBytes` counts them.
    public static func headerBytes(_ headers: [Field]) -> Int {
        headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
    }

    /// Why headers of `bytes` bytes cannot be sent, in the words of the 500 that answers instead.
    static func reason(bytes: Int) -> String {
        "Mishap cannot send this response: its headers take \(bytes) bytes, over the limit of "
            + "\(maximumHeaderBytes) bytes for a response's headers"
    }
}

extension ResponsePlan {
    /// Whether a response head is sent for this plan at all: not for a hang, nor for the faults
    /// that break the connection before answering (`close`, `reset`, `garbage`).
    public var sendsHead: Bool {
        if hang { return false }
        switch fault {
        case nil, .truncate?, .truncateChunked?, .contentLengthMismatch?: return true
        case .close?, .reset?, .garbage?: return false
        }
    }

    /// This plan when its headers fit `room` (at most `ResponseHead.maximumHeaderBytes`), or are
    /// never sent; otherwise a 500 with a JSON error saying so, for the same endpoint and rule
    /// and after the same delay, whose `warning` asks the server to log why. (A prepared
    /// response fits the limit, checked once when its template is made: it is checked again only
    /// when a request leaves less room.)
    public func fittingResponseHead(room: Int = ResponseHead.maximumHeaderBytes) -> ResponsePlan {
        var plan = self
        plan.fitResponseHead(room: room)
        return plan
    }

    /// The same in place: the plan becomes that 500 when its headers do not fit. The checks a
    /// plan that fits passes (nearly all) read only its fields: passing the whole plan to a
    /// method from here made the compiler copy it (about ten retains and ten releases).
    public mutating func fitResponseHead(room: Int = ResponseHead.maximumHeaderBytes) {
        let room = min(room, ResponseHead.maximumHeaderBytes)
        guard sendsHead, prepared == nil || room < ResponseHead.maximumHeaderBytes else { return }
        let bytes = ResponseHead.headerBytes(headers)
        guard bytes > room else { return }
        self = headRefusal(bytes: bytes, room: room)
    }

    /// The 500 that replaces this plan, whose headers take `bytes`, more than `room`.
    private func headRefusal(bytes: Int, room: Int) -> ResponsePlan {
        let beside = room < ResponseHead.maximumHeaderBytes
        var refusal = ResponsePlan.error(500, reason: beside
            ? "Mishap cannot send this response: its headers take \(bytes) bytes, and only \(room) fit beside this request"
            : ResponseHead.reason(bytes: bytes))
        refusal.delayMilliseconds = delayMilliseconds
        refusal.bookkeeping = bookkeeping
        refusal.bookkeeping.warning = beside
            ? "response headers of \(bytes) bytes do not fit beside this request (room for \(room)); answered 500 instead of \(status)"
            : "response headers of \(bytes) bytes are over the limit of \(ResponseHead.maximumHeaderBytes) bytes; answered 500 instead of \(status)"
        return refusal
    }
}
