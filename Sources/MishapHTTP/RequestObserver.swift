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
}

extension RequestObserver {
    public var followsEveryRequest: Bool { true }
    public func finished(tag: UInt64, completedNormally: Bool) {}
    public func incomplete(_ request: Request, record: CompletedRequest) {}
    public func eventStreamEnded(tag: UInt64, _ stream: EventStreamProgress.Snapshot) {}
}
