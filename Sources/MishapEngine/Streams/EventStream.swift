/// Server-Sent Events as declared in a scenario (`events:`, `repeat`, `heartbeat`, a stream
/// `fault`), ready to be filled in for one request.
public struct EventStreamTemplate: Sendable {
    /// One declared event: its fields (each optional), the wait before it, and how it is broken.
    public struct Event: Sendable {
        /// `id:`; a placeholder may fill it in. Line breaks in the filled-in value are dropped.
        public var id: Template?
        /// `event:` (the event's type).
        public var name: Template?
        /// `data:`, one `data:` line per line of the filled-in text (JSON is one line).
        public var data: Template?
        /// `retry:`, in milliseconds.
        public var retryMilliseconds: Int?
        /// The wait before the event, counted from the event before it (or the head).
        public var delayMilliseconds: Int
        public var malformation: EventMalformation?

        public init(id: Template? = nil, name: Template? = nil, data: Template? = nil, retryMilliseconds: Int? = nil,
                    delayMilliseconds: Int = 0, malformation: EventMalformation? = nil) {
            self.id = id
            self.name = name
            self.data = data
            self.retryMilliseconds = retryMilliseconds
            self.delayMilliseconds = delayMilliseconds
            self.malformation = malformation
        }
    }

    public let events: [Event]
    /// How many times the list is sent in all; nil: until the client leaves or the server stops.
    public let passes: Int?
    /// A comment line (`: heartbeat`) after this long without a byte; nil: none.
    public let heartbeatMilliseconds: Int?
    /// What happens after the last event; nil: the stream ends cleanly.
    public let fault: EventStreamFault?

    public init(events: [Event], passes: Int? = 1, heartbeatMilliseconds: Int? = nil, fault: EventStreamFault? = nil) {
        self.events = events
        self.passes = passes
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.fault = fault
    }

    func plan(context: inout MatchContext) -> EventStreamPlan {
        var planned: [EventStreamPlan.Event] = []
        planned.reserveCapacity(events.count)
        for event in events {
            let id = event.id.map { Self.singleLine($0.render(context: &context)) }
            let name = event.name.map { Self.singleLine($0.render(context: &context)) }
            let data = event.data.map { $0.render(context: &context) }
            let bytes = EventStreamPlan.wireBytes(id: id, name: name, data: data, retryMilliseconds: event.retryMilliseconds,
                                                  malformation: event.malformation)
            planned.append(EventStreamPlan.Event(bytes: bytes, delayMilliseconds: event.delayMilliseconds,
                                                 id: id.map { String(decoding: $0, as: UTF8.self) },
                                                 retryMilliseconds: event.retryMilliseconds))
        }
        return EventStreamPlan(events: planned, passes: passes, heartbeatMilliseconds: heartbeatMilliseconds, fault: fault)
    }

    /// A field value without the line breaks that would end it early (a placeholder's value).
    static func singleLine(_ bytes: [UInt8]) -> [UInt8] {
        bytes.filter { $0 != 0x0A && $0 != 0x0D }
    }
}

/// How a stream of events ends when it does not end cleanly.
public enum EventStreamFault: String, Sendable, CaseIterable {
    /// A TCP reset after the last event: the client sees ECONNRESET.
    case reset
    /// The connection closes (FIN) without the chunked body's last chunk: the body is cut short.
    case close
    /// No byte more (no heartbeat either), the connection held until the client leaves or the
    /// server stops.
    case stall
}

/// How one event is broken on the wire (`malformed:`).
public enum EventMalformation: String, Sendable, CaseIterable {
    /// A line `mishap-malformed` with no colon before the event's fields: a field the standard
    /// says to ignore, which a strict parser refuses.
    case field
    /// No blank line after the event: a client merges it into the next one, or drops it when
    /// the stream ends.
    case unterminated
    /// The bytes 0xFF 0xFE, never valid UTF-8, at the start of the first `data:` line's value.
    case utf8
}

/// The events one request is sent, filled in and written as they go on the wire.
public struct EventStreamPlan: Sendable {
    public struct Event: Sendable {
        /// The event's lines, its blank line included (unless it is `unterminated`).
        public var bytes: [UInt8]
        public var delayMilliseconds: Int
        /// The `id:` sent, if the event has one.
        public var id: String?
        /// The `retry:` sent, if the event has one.
        public var retryMilliseconds: Int?

        public init(bytes: [UInt8], delayMilliseconds: Int, id: String?, retryMilliseconds: Int? = nil) {
            self.bytes = bytes
            self.delayMilliseconds = delayMilliseconds
            self.id = id
            self.retryMilliseconds = retryMilliseconds
        }
    }

    public var events: [Event]
    /// How many times the list is sent in all; nil: forever.
    public var passes: Int?
    public var heartbeatMilliseconds: Int?
    public var fault: EventStreamFault?

    public init(events: [Event], passes: Int? = 1, heartbeatMilliseconds: Int? = nil, fault: EventStreamFault? = nil) {
        self.events = events
        self.passes = passes
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.fault = fault
    }

    /// The comment line sent as a heartbeat.
    public static let heartbeatLine: [UInt8] = Array(": heartbeat\n".utf8)
    /// The line a `malformed: field` event starts with.
    public static let malformedFieldLine: [UInt8] = Array("mishap-malformed\n".utf8)
    /// The bytes a `malformed: utf8` event's data starts with.
    public static let invalidUTF8: [UInt8] = [0xFF, 0xFE]

    /// An event's lines in the order `id`, `event`, `retry`, `data` (one line per line of the
    /// data: LF, CRLF and CR all break it), then a blank line. Lines end with LF.
    public static func wireBytes(id: [UInt8]?, name: [UInt8]?, data: [UInt8]?, retryMilliseconds: Int?,
                                 malformation: EventMalformation?) -> [UInt8] {
        var out: [UInt8] = []
        func field(_ name: String, _ value: [UInt8]) {
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: value)
            out.append(0x0A)
        }
        if malformation == .field { out.append(contentsOf: malformedFieldLine) }
        if let id { field("id", id) }
        if let name { field("event", name) }
        if let retryMilliseconds { field("retry", Array(String(retryMilliseconds).utf8)) }
        var lines: [[UInt8]] = []
        if let data {
            var line: [UInt8] = []
            var index = 0
            while index < data.count {
                let byte = data[index]
                if byte == 0x0A || byte == 0x0D {
                    lines.append(line)
                    line = []
                    if byte == 0x0D, index + 1 < data.count, data[index + 1] == 0x0A { index += 1 }
                } else {
                    line.append(byte)
                }
                index += 1
            }
            lines.append(line)
        }
        if malformation == .utf8 {
            if lines.isEmpty { lines = [[]] }
            lines[0].insert(contentsOf: invalidUTF8, at: 0)
        }
        for line in lines { field("data", line) }
        if malformation != .unterminated { out.append(0x0A) }
        return out
    }
}
