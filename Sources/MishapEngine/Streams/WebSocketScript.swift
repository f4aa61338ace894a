import MishapPattern

/// A WebSocket script as declared in a scenario (`respond: { websocket: {...} }`): messages the
/// server sends after the upgrade, replies to the client's messages, and how the conversation
/// ends (cleanly or with a fault); or a refusal of the upgrade itself (`refuse: 403`).
public struct WebSocketScript: Sendable {
    /// At most this many messages in `send` and in all replies together, checked when the file
    /// is read: each is held in memory for the rule's life.
    public static let maximumMessages = 1_000
    /// The largest message the server accepts from a client (larger: close 1009), and the largest
    /// one a script may send.
    public static let maximumMessageBytes = 1 << 20

    /// The status that refuses the upgrade (`refuse: 403`); nil upgrades.
    public var refuse: Int?
    /// Sent in order once upgraded, each after its delay (counted from the one before).
    public var send: [WebSocketMessage]
    /// The first reply whose `when` matches a client's message is sent back.
    public var replies: [WebSocketReply]
    /// How the conversation ends; nil: it stays open until the client closes it (or the server
    /// stops).
    public var end: WebSocketEnd?

    public init(refuse: Int? = nil, send: [WebSocketMessage] = [], replies: [WebSocketReply] = [], end: WebSocketEnd? = nil) {
        self.refuse = refuse
        self.send = send
        self.replies = replies
        self.end = end
    }

    /// The messages answering a client's message, or nil when no reply matches.
    public func reply(to payload: [UInt8], isText: Bool) -> [WebSocketMessage]? {
        let text = isText ? String(decoding: payload, as: UTF8.self) : nil
        return replies.first { $0.when.holds(text: text, payload: payload) }?.send
    }
}

/// One message a script sends: text or binary, after a delay.
public struct WebSocketMessage: Sendable, Equatable {
    public var payload: [UInt8]
    /// A text frame (`text:`); else binary (`base64:`).
    public var isText: Bool
    /// Waited before sending, counted from the message before (or the upgrade).
    public var delayMilliseconds: Int

    public init(payload: [UInt8], isText: Bool, delayMilliseconds: Int = 0) {
        self.payload = payload
        self.isText = isText
        self.delayMilliseconds = delayMilliseconds
    }
}

/// `replies: [ { when: {...}, send: ... } ]`.
public struct WebSocketReply: Sendable {
    public var when: WebSocketMatch
    public var send: [WebSocketMessage]

    public init(when: WebSocketMatch, send: [WebSocketMessage]) {
        self.when = when
        self.send = send
    }
}

/// What a client's message must be for a reply: every test given must hold. `text` and
/// `matches` look at a text message's whole text; `json` reads a text message as JSON and tests
/// fields by their dotted path, as `when: { body: ... }` does for request bodies. An empty
/// match (`when: {}`) matches every message.
public struct WebSocketMatch: Sendable {
    public var text: String?
    public var pattern: Pattern?
    public var json: [(path: [String], condition: Condition)]
    /// `binary: true` matches binary messages only, `false` text ones only.
    public var binary: Bool?

    public init(text: String? = nil, pattern: Pattern? = nil, json: [(path: [String], condition: Condition)] = [], binary: Bool? = nil) {
        self.text = text
        self.pattern = pattern
        self.json = json
        self.binary = binary
    }

    /// Whether a message matches: `text` is nil for a binary one.
    public func holds(text message: String?, payload: [UInt8]) -> Bool {
        if let binary, binary != (message == nil) { return false }
        if let text, message != text { return false }
        if let pattern {
            guard let message, pattern.matches(message) else { return false }
        }
        if !json.isEmpty {
            guard message != nil, let document = JSONValue.parse(payload) else { return false }
            for (path, condition) in json where !condition.holds(for: document.value(at: path[...])?.text) {
                return false
            }
        }
        return true
    }
}

/// `end:` how the conversation ends, `after` the last scripted message was sent.
public struct WebSocketEnd: Sendable, Equatable {
    public var ending: WebSocketEnding
    public var afterMilliseconds: Int

    public init(_ ending: WebSocketEnding, afterMilliseconds: Int = 0) {
        self.ending = ending
        self.afterMilliseconds = afterMilliseconds
    }
}

/// The ways a script ends.
public enum WebSocketEnding: Sendable, Equatable {
    /// A close frame with this code and reason, then the closing handshake.
    case close(code: Int, reason: String)
    /// The TCP connection closed without a close frame: the client sees 1006.
    case drop
    /// Pings are no longer answered (the connection stays open).
    case stallPings
    /// A frame with reserved bits set and a reserved opcode: the client fails with 1002.
    case garbage
    /// A frame header announcing a length far beyond any limit (2^62 bytes): 1009 or 1002.
    case oversized
    /// Half a message is sent, then a TCP reset.
    case reset
}

extension WebSocketMatch {
    /// Whether a condition can test a message: one with placeholders (`{{...}}`) needs a
    /// request to fill them in from, which a message is not.
    public static func canTest(_ condition: Condition) -> Bool {
        condition.dependsOnValueAlone
    }
}
