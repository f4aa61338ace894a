import MishapService

/// What a stream of events (`respond: { events: [...] }`, docs/streams.md) sent, as
/// `RecordedRequest.eventStream` holds it: read while the stream goes on (the count grows with
/// each event) and once it is over, to assert how far a client read and what it was left with:
///
/// ```swift
/// let stream = try #require(mishap.requests(session: session).first?.eventStream)
/// #expect(stream.eventsSent == 3 && stream.lastEventID == "3" && stream.ending == .reset)
/// ```
public struct EventStreamOutcome: Sendable, Equatable {
    /// How a stream of events ended.
    public enum Ending: String, Sendable, Equatable {
        /// After its last event, without a fault: the server closed the response cleanly.
        case clean
        /// The rule's `fault: close`: the connection closed mid-stream, without ending the response.
        case close
        /// The rule's `fault: reset`: a TCP reset after the events listed.
        case reset
        /// The rule's `fault: stall`: no bytes, and no heartbeat, from then on, until the client left.
        case stall
        /// The client left, or the server stopped, before the stream was over.
        case cut
    }

    /// The events sent so far (a heartbeat is not one).
    public let eventsSent: Int
    /// The last `id:` sent: what a client should send back as `Last-Event-ID` when it reconnects.
    public let lastEventID: String?
    /// The last `retry:` sent, in milliseconds: how long a client should wait before it reconnects.
    public let retryMilliseconds: Int?
    /// How it ended; nil while it goes on.
    public let ending: Ending?

    /// True while the stream goes on (the server is still sending, or waiting to send).
    public var isLive: Bool { ending == nil }

    init(_ record: EventStreamRecord) {
        eventsSent = record.events
        lastEventID = record.lastEventID
        retryMilliseconds = record.retryMilliseconds
        // The journal names the faults and `cut`, and nothing for a clean end.
        ending = record.over ? record.ending.flatMap(Ending.init(rawValue:)) ?? .clean : nil
    }
}
