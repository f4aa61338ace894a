import MishapSupport

/// One request sent on to the upstream server: everything libcurl needs, already decided
/// (the URL joined, the headers chosen; see `ForwardedHeaders`).
public struct UpstreamCall: Sendable {
    /// `GET`, `POST`, ... as the client sent it.
    public var method: String
    /// The full URL: the upstream's base, the request's path and its query.
    public var url: String
    /// The header lines to send, in order (`Host` among them only when it must be set).
    public var headers: [(name: String, value: String)]
    /// The request body (sent when not empty, or for methods that carry one).
    public var body: [UInt8]

    public init(method: String, url: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// What came of an `UpstreamCall`.
public enum UpstreamResult: Sendable {
    /// The upstream answered: its last response's status, header lines in order, body, and
    /// how long the call took.
    case answered(status: Int, headers: [(name: String, value: String)], body: [UInt8], milliseconds: Double)
    /// No answer: why, in a sentence, and how long the call took before it gave up.
    case failed(UpstreamFailure, milliseconds: Double)
}

/// What came of a call besides its result: what was changed in the answer's head on its way
/// (or why it was refused), and the share of the memory budget its body holds.
public struct UpstreamReport: Sendable {
    /// What was changed in the answer's head, or why it was refused, one sentence each; empty
    /// when it came as HTTP/1.1 allows.
    public var repairs: [String] = []
    /// The memory the answer's body holds, given back when the last reference to it goes: kept
    /// by the server until the request ends, its last byte sent (`Responder.forward`).
    public var memory: MemoryLease?

    public init(repairs: [String] = [], memory: MemoryLease? = nil) {
        self.repairs = repairs
        self.memory = memory
    }

    /// The repairs in one sentence, for the journal; nil when there are none.
    public var note: String? { repairs.isEmpty ? nil : repairs.joined(separator: "; ") }
}

/// Why an upstream call brought no answer.
public struct UpstreamFailure: Error, Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// Nothing listens there, or the name does not resolve, or the connection broke.
        case unreachable
        /// No complete answer within the timeout.
        case timeout
        /// The answer's body is larger than `UpstreamClient.maximumBodyBytes`.
        case tooLarge
        /// The answers held at once would pass the memory budget (`UpstreamOptions`' limit).
        case memory
        /// The answer breaks HTTP in a way Mishap does not pass on (a 1xx status as the final
        /// answer, such as `101 Switching Protocols`).
        case malformed
        /// TLS failed (the upstream's certificate is not trusted, for one).
        case tls
        /// Mishap is stopping: the call was cancelled.
        case cancelled
        /// Anything else libcurl reports.
        case other
    }

    public var kind: Kind
    /// libcurl's words for it.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}
