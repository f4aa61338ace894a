import MishapEngine
import MishapHTTP
import MishapSupport
import Synchronization

// What a stream of events or a WebSocket adds to its request's entry as it goes, and the ties
// between a reconnection and the stream it resumes.
extension RequestJournal {
    /// Notes what the stream of events of entry `id` sent, once it is over, and ties to it the
    /// later requests of its session that carried its last event id before it was over (a
    /// client reconnecting before the server had let go of the stream).
    func eventStreamEnded(_ id: UInt64, _ record: EventStreamRecord) {
        guard capacity > 0, id != 0 else { return }
        var session: String??
        update(id) { entry in
            entry.eventStream = record
            session = .some(entry.session)
        }
        guard let session, let lastID = record.lastEventID else { return }
        ring.withLock { ring in
            for position in ring.ids.indices where ring.ids[position] > id {
                guard let entry = ring.entries[position], entry.session == session, entry.resumesStream == nil,
                      entry.lastEventID == lastID else { continue }
                ring.entries[position]!.resumesStream = id
            }
        }
    }

    /// Notes what the stream of events of entry `id` sent so far, while it goes on.
    func eventStreamSent(_ id: UInt64, _ record: EventStreamRecord) {
        update(id) { entry in
            if entry.eventStream?.over != true { entry.eventStream = record }
        }
    }

    /// Notes a message passing on the WebSocket of entry `id`.
    func webSocketMessage(_ id: UInt64, _ message: WebSocketRecord.Message) {
        update(id) { entry in
            var record = entry.webSocket ?? WebSocketRecord()
            entry.webSocket = nil
            record.add(message, sent: message.direction == "sent")
            entry.webSocket = record
        }
    }

    /// Notes how the WebSocket of entry `id` ended.
    func webSocketEnded(_ id: UInt64, _ ending: WebSocketOutcome) {
        update(id) { entry in
            if entry.webSocket == nil { entry.webSocket = WebSocketRecord() }
            entry.webSocket!.ending = ending
        }
    }

    /// Ties entry `id`, whose request carried `Last-Event-ID: lastID`, to the newest earlier
    /// entry of `session` whose stream of events sent that id last. Returns that entry's id.
    @discardableResult
    func tieResume(_ id: UInt64, session: String?, lastID: String) -> UInt64? {
        guard capacity > 0, id != 0 else { return nil }
        return ring.withLock { ring -> UInt64? in
            var found: (position: Int, id: UInt64)?
            var resumed: UInt64?
            var position = ring.next
            for _ in 0..<ring.count {
                position = position == 0 ? capacity - 1 : position - 1
                guard let entry = ring.entries[position] else { continue }
                if entry.id == id { found = (position, id); continue }
                if entry.id < id, entry.session == session, let stream = entry.eventStream, stream.lastEventID == lastID {
                    resumed = entry.id
                    break
                }
            }
            if let resumed, let found { ring.entries[found.position]!.resumesStream = resumed }
            return resumed
        }
    }
}
