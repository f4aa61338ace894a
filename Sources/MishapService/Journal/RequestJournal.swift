import MishapEngine
import MishapHTTP
import MishapSupport
import Synchronization

/// One request as the journal keeps it.
public struct JournalEntry: Sendable {
    /// Numbers entries in arrival order, from 1; never reused, not even after a reset.
    public var id: UInt64
    /// When the request arrived, in milliseconds since 1970.
    public var time: Int64
    public var method: String
    public var path: String
    public var query: [Field]
    public var headers: [Field]
    /// The body, cut to the journal's body limit (`bodySize` tells the whole size).
    public var body: [UInt8]
    public var bodySize: Int
    /// The value of the session header, if sent.
    public var session: String?
    /// The endpoint that answered (`GET /login`), nil when none matched (404).
    public var endpoint: String?
    /// The rule that answered.
    public var rule: String?
    /// The status sent; nil for a fault or a hang, which send none.
    public var status: Int?
    public var fault: Fault?
    public var delayMilliseconds: Int
    public var hang: Bool
    /// The state changes the answering rule made, in order.
    public var stateChanges: [StateChange] = []
    /// The runtime entry (`r3`) whose rule answered, when one did.
    public var runtimeRule: String? = nil
    /// The upstream the request was sent on to (`--upstream`), when no rule answered it; its
    /// answer's status lands in `status` when it comes.
    public var upstream: String? = nil
    /// How long the upstream took to answer (or to fail), in milliseconds; nil until then.
    public var upstreamMilliseconds: Double? = nil
    /// What Mishap changed or refused in the upstream's answer (a folded header unfolded, a
    /// 1xx final status refused), in a sentence; nil when it passed as it came.
    public var upstreamNote: String? = nil
    /// What a network profile did to the answer (its name, the latency added, the rate, a
    /// reset and why); nil when no profile applied.
    public var network: NetworkShaping? = nil
    /// What `ranges:` made of the request: the `Range` and `If-Range` asked, the status and
    /// `Content-Range` sent, the `ETag`, a range fault or cut; nil for a response without `ranges:`.
    public var range: RangeOutcome? = nil
    /// From the request's headers arriving to the server being done with it (delays, dribbles
    /// and hangs included), in nanoseconds; nil while the server is still on it.
    public var durationNanoseconds: Int64? = nil
    /// True when the request ended early: the client left, a timeout, or the server stopped.
    public var closedEarly = false
    /// True when its body never came whole, so nothing answered it (`MishapService.incomplete`).
    public var bodyIncomplete = false
    /// For an answer that was a stream of events: what it sent (counted when it is over).
    public var eventStream: EventStreamRecord? = nil
    /// For a request carrying `Last-Event-ID`: the id of the entry of the same session's
    /// earlier stream whose last event id it sent (the stream it resumes), when there is one.
    public var resumesStream: UInt64? = nil
    /// For a request upgraded to a WebSocket: its messages so far (counted, the last ones
    /// kept) and how it ended.
    public var webSocket: WebSocketRecord? = nil
    /// For a request refused by the API description (`--openapi`), answered 400 before the
    /// rules: every problem found (`/email: expected a string in format email, got 42`).
    public var contractProblems: [String]? = nil
    /// `MonotonicClock.nanoseconds()` when the entry was made, the start of its duration.
    var started: Int64 = 0

    /// The `Last-Event-ID` header as sent, if it was.
    public var lastEventID: String? {
        headers.first { $0.name.equalsIgnoringASCIICase("Last-Event-ID") }?.value
    }

    /// The body as text when it is UTF-8, for showing.
    public var bodyText: String? { String(validUTF8: body) }
}

/// What a stream of events sent, as the journal keeps it.
public struct EventStreamRecord: Sendable, Equatable {
    /// The events sent (a heartbeat is not one).
    public var events = 0
    /// The last `id:` sent, which a client sends back as `Last-Event-ID`.
    public var lastEventID: String?
    /// The last `retry:` sent, in milliseconds.
    public var retryMilliseconds: Int?
    /// `close`, `reset` or `stall` (the stream's fault), `cut` (the client left or the server
    /// stopped before the stream was over); nil for a clean end or a stream still going on.
    public var ending: String?
    /// False while the stream is going on.
    public var over = false

    public init(events: Int = 0, lastEventID: String? = nil, retryMilliseconds: Int? = nil, ending: String? = nil, over: Bool = false) {
        self.events = events
        self.lastEventID = lastEventID
        self.retryMilliseconds = retryMilliseconds
        self.ending = ending
        self.over = over
    }
}

/// What passed on a WebSocket, as the journal keeps it: counts, the last `keptMessages`
/// messages (each cut to 256 bytes), and how it ended. Bounded whatever the socket carries.
public struct WebSocketRecord: Sendable, Equatable {
    /// One message as kept.
    public struct Message: Sendable, Equatable {
        public var time: Int64
        public var direction: String
        public var kind: String
        /// Its first 256 bytes.
        public var payload: [UInt8]
        public var size: Int
    }
    /// How many messages are kept, the oldest let go first.
    public static let keptMessages = 20

    public var sent = 0
    public var received = 0
    /// The last messages, oldest first.
    public var messages: [Message] = []
    /// nil while the socket is open.
    public var ending: WebSocketOutcome?

    public init() {}

    mutating func add(_ message: Message, sent isSent: Bool) {
        if isSent { sent += 1 } else { received += 1 }
        if messages.count == Self.keptMessages { messages.removeFirst() }
        messages.append(message)
    }
}

/// What to keep from the journal: every filter given must match.
public struct JournalFilter: Sendable {
    public var method: String?
    /// The request path, exactly.
    public var path: String?
    public var session: String?
    public var rule: String?
    public var endpoint: String?
    /// Only the most recent this many.
    public var limit: Int?

    public init(method: String? = nil, path: String? = nil, session: String? = nil, rule: String? = nil,
                endpoint: String? = nil, limit: Int? = nil) {
        self.method = method
        self.path = path
        self.session = session
        self.rule = rule
        self.endpoint = endpoint
        self.limit = limit
    }

    /// A header the request carried: its name (any case) and its value, exactly.
    public var header: (name: String, value: String)?
    /// Text the request's body contains (its bytes, as UTF-8).
    public var bodyContains: String?
    /// Only entries recorded after the one of this id (a page polling for new requests); with
    /// `limit`, the first that many of them rather than the last.
    public var after: UInt64?

    /// Whether only `after` and `limit` are set: every entry after the id matches.
    var onlyPages: Bool {
        method == nil && path == nil && session == nil && rule == nil && endpoint == nil && header == nil
            && (bodyContains ?? "").isEmpty
    }

    func matches(_ entry: JournalEntry) -> Bool {
        if let after, entry.id <= after { return false }
        guard (method == nil || entry.method == method) && (path == nil || entry.path == path)
            && (session == nil || entry.session == session) && (rule == nil || entry.rule == rule)
            && (endpoint == nil || entry.endpoint == endpoint) else { return false }
        if let header, !entry.headers.contains(where: { $0.name.equalsIgnoringASCIICase(header.name) && $0.value == header.value }) {
            return false
        }
        if let bodyContains, !bodyContains.isEmpty {
            let needle = Array(bodyContains.utf8)
            guard entry.body.count >= needle.count else { return false }
            return (0...(entry.body.count - needle.count)).contains { start in entry.body[start..<(start + needle.count)].elementsEqual(needle) }
        }
        return true
    }
}

/// The last requests served, in a ring of fixed size: memory stays bounded however long the
/// server runs (the oldest entries make room, and `dropped` counts them).
public final class RequestJournal: Sendable {
    public let capacity: Int
    /// Bodies are kept up to this many bytes.
    public let bodyLimit: Int

    struct Ring {
        var entries: [JournalEntry?]
        /// Each slot's entry's id (0 for none): looking an id up reads these, not the entries.
        var ids: [UInt64]
        var next = 0
        var count = 0
        var nextID: UInt64 = 1
        var dropped = 0
        /// How many times entries were cleared (a reset).
        var clears = 0
    }
    let ring: Mutex<Ring>
    /// Whether an entry with a stream of events was ever recorded: until one is, no request
    /// can resume a stream, and its headers are not searched for `Last-Event-ID`.
    private let eventStreamRecorded = Atomic<Bool>(false)

    /// Whether a request could resume a stream of events this journal recorded (one was).
    public var mayResumeStreams: Bool { eventStreamRecorded.load(ordering: .acquiring) }

    public init(capacity: Int, bodyLimit: Int = 64 << 10) {
        self.capacity = max(0, capacity)
        self.bodyLimit = bodyLimit
        ring = Mutex(Ring(entries: Array(repeating: nil, count: max(0, capacity)), ids: Array(repeating: 0, count: max(0, capacity))))
    }

    /// Adds an entry (its id is assigned here, and returned; 0 when the journal keeps none).
    @discardableResult
    func record(_ entry: consuming JournalEntry) -> UInt64 {
        guard capacity > 0 else { return 0 }
        // Swapped into its slot rather than assigned: the entry is not copied, and the one it
        // replaces is freed after the lock is let go.
        if entry.body.count > bodyLimit { entry.body = Array(entry.body.prefix(bodyLimit)) }
        entry.started = MonotonicClock.nanoseconds()
        if entry.eventStream != nil, !eventStreamRecorded.load(ordering: .relaxed) {
            eventStreamRecorded.store(true, ordering: .releasing)
        }
        var slot: JournalEntry? = .some(consume entry)
        return ring.withLock { ring in
            let id = ring.nextID
            slot!.id = id
            ring.nextID += 1
            if ring.count == capacity { ring.dropped += 1 } else { ring.count += 1 }
            swap(&ring.entries[ring.next], &slot)
            ring.ids[ring.next] = id
            ring.next = (ring.next + 1) % capacity
            return id
        }
    }

    /// Notes how long the request of entry `id` took (from the entry's making: the request had
    /// been read and answered by then, a few microseconds after it arrived), once the server
    /// is done with it. The
    /// entry is looked for from the newest back (the entries just recorded are the ones
    /// completing); one the ring has let go of is not found, and nothing happens.
    func complete(_ id: UInt64, completedNormally: Bool) {
        let now = MonotonicClock.nanoseconds()
        update(id) { entry in
            entry.durationNanoseconds = now - entry.started
            entry.closedEarly = !completedNormally
        }
    }

    /// Notes the upstream's answer to entry `id` (the status sent: the upstream's, or Mishap's
    /// 502 or 504 when it gave none) and how long it took.
    func upstreamAnswered(_ id: UInt64, status: Int?, milliseconds: Double, note: String? = nil) {
        update(id) { entry in
            entry.status = status
            entry.upstreamMilliseconds = milliseconds
            entry.upstreamNote = note
        }
    }

    /// Changes the entry `id`, if it is still kept: looked for from the newest back (the
    /// entries just recorded are the ones changing); one the ring has let go of is not found.
    func update(_ id: UInt64, _ change: (inout JournalEntry) -> Void) {
        guard capacity > 0, id != 0 else { return }
        ring.withLock { ring in
            var position = ring.next
            var left = ring.count
            while left > 0 {
                left -= 1
                position = position == 0 ? capacity - 1 : position - 1
                let found = ring.ids[position]
                guard found >= id else { return }
                if found == id {
                    change(&ring.entries[position]!)
                    return
                }
            }
        }
    }

    /// How many times entries were cleared: a page polling with `after` sees nothing of a
    /// reset otherwise (ids keep counting).
    public var clears: Int { ring.withLock { $0.clears } }

    /// The entries kept that match `filter`, oldest first, and how many entries the ring has
    /// let go of since the last clear.
    public func entries(matching filter: JournalFilter = JournalFilter()) -> (entries: [JournalEntry], dropped: Int) {
        let (all, dropped) = ring.withLock { ring -> ([JournalEntry], Int) in
            var all: [JournalEntry] = []
            all.reserveCapacity(ring.count)
            let start = (ring.next - ring.count + capacity) % max(capacity, 1)
            // Only what is newer than `after` is copied, and, for a page polling with nothing
            // but `after` and `limit`, no more than it asked for: the lock is held briefly.
            let after = filter.after ?? 0
            let enough = filter.after != nil && filter.onlyPages ? filter.limit ?? .max : .max
            for offset in 0..<ring.count {
                if let entry = ring.entries[(start + offset) % capacity], entry.id > after {
                    all.append(entry)
                    if all.count >= enough { break }
                }
            }
            return (all, ring.dropped)
        }
        var kept = all.filter(filter.matches)
        // The last N; after an id, the first N after it (so a poller pages through, missing none).
        if let limit = filter.limit, kept.count > limit {
            if filter.after != nil { kept.removeLast(kept.count - max(0, limit)) } else { kept.removeFirst(kept.count - max(0, limit)) }
        }
        return (kept, dropped)
    }

    /// Forgets every entry, or only those of one session.
    public func clear(session: String? = nil) {
        ring.withLock { ring in
            ring.clears += 1
            guard let session else {
                for index in ring.entries.indices { ring.entries[index] = nil }
                for index in ring.ids.indices { ring.ids[index] = 0 }
                ring.next = 0
                ring.count = 0
                ring.dropped = 0
                return
            }
            // Keep the others, in order, compacted to the start of the ring.
            let start = (ring.next - ring.count + capacity) % max(capacity, 1)
            var kept: [JournalEntry] = []
            for offset in 0..<ring.count {
                if let entry = ring.entries[(start + offset) % capacity], entry.session != session { kept.append(entry) }
            }
            for index in ring.entries.indices {
                ring.entries[index] = index < kept.count ? kept[index] : nil
                ring.ids[index] = index < kept.count ? kept[index].id : 0
            }
            ring.count = kept.count
            ring.next = kept.count % capacity
        }
    }
}
