import MishapEngine

/// Told when the server is done with a request: about every request in detail (for request
/// logs), or only about those whose plan carried a completion tag (for the journal's
/// durations), which costs no per-request state. Class-bound: the server hands its observer on
/// with one reference count (an existential of any type was copied through its box, about 140
/// instructions a request).
public protocol RequestObserver: AnyObject, Sendable {
    /// Whether `completed` is wanted for every request. When false, the server keeps no record
    /// of requests and calls only `finished`.
    var followsEveryRequest: Bool { get }
    /// A request the server is done with, in detail (when `followsEveryRequest`).
    func completed(_ request: CompletedRequest)
    /// The server is done with the request whose plan carried `tag` (when not
    /// `followsEveryRequest`: `completed` carries the tag otherwise).
    func finished(tag: UInt64, completedNormally: Bool)
    /// A request whose head came but whose body never came whole (the client left, or sent
    /// nothing more until a timeout, or the server stopped, or libmicrohttpd refused a broken
    /// chunked body), so the responder was never asked: `request` is what arrived (its body so
    /// far), `record` its log line's fields (`bodyIncomplete`, no status). Told whether or not
    /// the observer follows every request, instead of `completed`.
    func incomplete(_ request: Request, record: CompletedRequest)
    /// A stream of events answering the request whose plan carried `tag` is over: what it sent
    /// (told after libmicrohttpd let go of it, whether or not the observer follows every request).
    func eventStreamEnded(tag: UInt64, _ stream: EventStreamProgress.Snapshot)
    /// An event of the stream answering the request whose plan carried `tag` was sent: what
    /// the stream sent so far (on libmicrohttpd's thread, while the stream goes on: cheap, no
    /// blocking).
    func eventStreamSent(tag: UInt64, _ stream: EventStreamProgress.Snapshot)
    /// A message passed on the WebSocket upgraded from the request whose plan carried `tag`
    /// (called on the WebSocket loop's thread, as it passes: cheap, no blocking).
    func webSocketMessage(tag: UInt64, _ message: WebSocketMessageNote)
    /// The WebSocket upgraded from the request whose plan carried `tag` is over, and how
    /// (called on the WebSocket loop's thread once it lets go of the socket).
    func webSocketEnded(tag: UInt64, _ ending: WebSocketOutcome)
}

extension RequestObserver {
    public var followsEveryRequest: Bool { true }
    public func finished(tag: UInt64, completedNormally: Bool) {}
    public func incomplete(_ request: Request, record: CompletedRequest) {}
    public func eventStreamEnded(tag: UInt64, _ stream: EventStreamProgress.Snapshot) {}
    public func eventStreamSent(tag: UInt64, _ stream: EventStreamProgress.Snapshot) {}
    public func webSocketMessage(tag: UInt64, _ message: WebSocketMessageNote) {}
    public func webSocketEnded(tag: UInt64, _ ending: WebSocketOutcome) {}
}

/// One message that passed on a WebSocket, as an observer is told of it: its start only.
public struct WebSocketMessageNote: Sendable {
    public enum Direction: String, Sendable { case sent, received }
    public enum Kind: String, Sendable { case text, binary, ping, pong, close }
    /// At most this many bytes of a message's payload are passed on.
    public static let keptBytes = 256

    public var direction: Direction
    public var kind: Kind
    /// The payload's first `keptBytes` bytes.
    public var payload: [UInt8]
    /// The whole payload's size.
    public var size: Int

    public init(direction: Direction, kind: Kind, payload: some Collection<UInt8>) {
        self.direction = direction
        self.kind = kind
        self.payload = Array(payload.prefix(Self.keptBytes))
        self.size = payload.count
    }
}

/// How a WebSocket ended.
public struct WebSocketOutcome: Sendable, Equatable {
    public enum How: String, Sendable {
        /// A close frame (`by` tells whose came first; `code` and `reason` its own).
        case close
        /// The script's `drop`: a FIN without a close frame.
        case drop
        /// The script's `reset`: half a message, then a TCP reset.
        case reset
        /// The script's `garbage` or `oversized` frame, then the closing wait.
        case garbage, oversized
        /// The client closed or reset the connection without a close frame.
        case clientLeft
        /// The client did not read what it asked for (more than 8 MiB waiting): dropped.
        case clientTooSlow
        /// The server stopped (a close frame 1001 sent).
        case serverStopped
    }
    public var how: How
    /// `server` or `client`, for a close.
    public var by: String?
    public var code: Int?
    public var reason: String?

    public init(how: How, by: String? = nil, code: Int? = nil, reason: String? = nil) {
        self.how = how
        self.by = by
        self.code = code
        self.reason = reason
    }
}
