import Foundation
import MishapService

/// What passed on a WebSocket upgraded from a request (`respond: { websocket: ... }`,
/// docs/websocket.md), as `RecordedRequest.webSocket` holds it: the messages both ways (the last
/// 20, each cut to 256 bytes: the journal is bounded whatever a socket carries), how many went
/// each way, and how it ended. Read it while the socket is open (it grows as messages pass) and
/// once it is over:
///
/// ```swift
/// let socket = try #require(mishap.requests(session: session).first?.webSocket)
/// #expect(socket.messages.map(\.text) == ["hello", "ping", "pong"])
/// #expect(socket.ending?.how == .close && socket.ending?.code == 4000)
/// ```
public struct WebSocketExchange: Sendable, Equatable {
    /// One message, as the journal keeps it.
    public struct Message: Sendable, Equatable {
        /// Which way it went.
        public enum Direction: String, Sendable, Equatable {
            /// From the server (the script's `send`, a reply, a pong, a close).
            case sent
            /// From the client.
            case received
        }

        /// Its kind: a data frame (`text`, `binary`) or a control frame.
        public enum Kind: String, Sendable, Equatable {
            case text, binary, ping, pong, close
        }

        /// When it passed (to the millisecond).
        public let date: Date
        public let direction: Direction
        public let kind: Kind
        /// Its first 256 bytes (a close frame's: the two bytes of its code, then its reason).
        public let payload: Data
        /// Its whole size in bytes.
        public let size: Int

        /// True when `payload` is only its start.
        public var isTruncated: Bool { size > payload.count }

        /// A text message's text (a truncated one's up to the last whole character kept), a
        /// close frame's reason; nil for other kinds.
        public var text: String? {
            switch kind {
            case .text: return Self.decoded(payload)
            case .close: return payload.count > 2 ? Self.decoded(payload.dropFirst(2)) : ""
            default: return nil
            }
        }

        /// UTF-8 text, leaving out a character cut at the end by the 256-byte limit.
        private static func decoded(_ bytes: Data) -> String {
            for cut in 0...min(3, bytes.count) {
                if let text = String(validating: bytes.dropLast(cut), as: UTF8.self) { return text }
            }
            return String(decoding: bytes, as: UTF8.self)
        }

        init(_ message: WebSocketRecord.Message) {
            date = Date(timeIntervalSince1970: Double(message.time) / 1000)
            direction = Direction(rawValue: message.direction) ?? .sent
            kind = Kind(rawValue: message.kind) ?? .binary
            payload = Data(message.payload)
            size = message.size
        }
    }

    /// How many messages the server sent (control frames included), over the socket's life.
    public let sentCount: Int
    /// How many messages the client sent (control frames included), over the socket's life.
    public let receivedCount: Int
    /// The last 20 messages both ways, oldest first.
    public let messages: [Message]
    /// How it ended: a close frame (`how == .close`, with `by`, `code` and `reason`), the
    /// script's `drop`, `reset`, `garbage` or `oversized`, the client leaving without a close
    /// frame (`clientLeft`), ...; nil while the socket is open.
    public let ending: WebSocketOutcome?

    /// True while the socket is open.
    public var isOpen: Bool { ending == nil }

    /// The messages that went one way, oldest first (of the last 20 kept).
    public func messages(_ direction: Message.Direction) -> [Message] { messages.filter { $0.direction == direction } }

    init(_ record: WebSocketRecord) {
        sentCount = record.sent
        receivedCount = record.received
        messages = record.messages.map(Message.init)
        ending = record.ending
    }
}
