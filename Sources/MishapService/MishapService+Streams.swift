import Logging
import MishapEngine
import MishapScenarios
import MishapHTTP
import MishapUpstream
import MishapSupport
import Synchronization

// What the server tells of streams of events and WebSockets as they go: the journal and the
// verdict's history take note.
extension MishapService {
    /// A stream of events is over: the journal and the verdict's history note what it sent.
    public func eventStreamEnded(tag: UInt64, _ stream: EventStreamProgress.Snapshot) {
        journal.eventStreamEnded(tag, EventStreamRecord(events: stream.events, lastEventID: stream.lastID,
                                                        retryMilliseconds: stream.retryMilliseconds,
                                                        ending: stream.ending?.rawValue, over: true))
        history.streamEnded(tag, lastEventID: stream.lastID, retryMilliseconds: stream.retryMilliseconds)
    }

    /// An event of a stream was sent: the journal's entry counts it as it goes.
    public func eventStreamSent(tag: UInt64, _ stream: EventStreamProgress.Snapshot) {
        journal.eventStreamSent(tag, EventStreamRecord(events: stream.events, lastEventID: stream.lastID,
                                                       retryMilliseconds: stream.retryMilliseconds))
    }

    /// A message passed on a WebSocket: the journal's entry keeps it (its start, the last few).
    public func webSocketMessage(tag: UInt64, _ message: WebSocketMessageNote) {
        journal.webSocketMessage(tag, WebSocketRecord.Message(time: WallClock.nowMilliseconds(), direction: message.direction.rawValue,
                                                              kind: message.kind.rawValue, payload: message.payload, size: message.size))
    }

    /// A WebSocket is over: the journal's entry notes how it ended.
    public func webSocketEnded(tag: UInt64, _ ending: WebSocketOutcome) {
        journal.webSocketEnded(tag, ending)
    }
}
