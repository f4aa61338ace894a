import Foundation
import MishapEngine
import MishapService

/// A request as the server received it, from the journal (`mishap.requests(...)`), with what
/// answered it. Read it to assert what your client sent:
///
/// ```swift
/// let login = try #require(mishap.requests(path: "/login").last)
/// #expect(login.header("content-type") == "application/json")   // any case
/// let sent = try JSONSerialization.jsonObject(with: login.body) as? [String: Any]
/// #expect(sent?["email"] as? String == "john@doe.com")
/// ```
public struct RecordedRequest: Sendable {
    /// Its number in the journal, increasing.
    public let id: UInt64
    /// When it arrived (to the millisecond).
    public let date: Date
    /// `GET`, `POST`, ...
    public let method: String
    /// The path, percent-decoded, without the query (`/isUserNameAvailable`).
    public let path: String
    /// Query parameters in order, percent-decoded; `queryValue(_:)` finds one.
    public let query: [(name: String, value: String)]
    /// Headers in the order sent, names as sent; `header(_:)` finds one in any case.
    public let headers: [(name: String, value: String)]
    /// The body's bytes (`Data`; empty without a body), cut at the journal's body limit (64 KiB).
    /// Decode it as your client encoded it: `JSONSerialization`, `JSONDecoder`, `String(decoding:as:)`.
    public let body: Data
    /// The session (`X-Mishap-Session`), nil without one.
    public let session: String?
    /// The endpoint that answered, as `GET /login`; nil when no endpoint matched (a 404).
    public let endpoint: String?
    /// The rule that answered (`maintenance`); nil when none did.
    public let rule: String?
    /// The status sent; nil for a fault or a hang.
    public let status: Int?
    /// The fault carried out instead of an answer (`reset`, `close`, ...).
    public let fault: String?
    /// The state changes the answering rule made (`set:`), in order: each value's name, what it
    /// was and what it became.
    public let stateChanges: [(name: String, from: StateValue, to: StateValue)]
    /// True when its body never came whole (the client closed first, as URLSession does when it
    /// re-sends a POST's head on a connection that was reset): nothing answered it, and `body`
    /// is what arrived.
    public let bodyIncomplete: Bool
    /// For a response with `ranges:` (docs/downloads.md), the ranges asked and sent: the
    /// `Range` and `If-Range` the request carried, the status and `Content-Range` of the answer,
    /// its `ETag`, and the bytes sent before a cut; nil for other responses.
    public let range: RangeOutcome?
    /// For an answer that was a stream of events (docs/streams.md): the events sent so far, the
    /// last `id:` and `retry:`, and how it ended (nil while it goes on: `isLive`); nil for
    /// other responses. The entry changes as the stream goes: read the request again (or wait
    /// with `session.waitForRequest`) to see it grow.
    public let eventStream: EventStreamOutcome?
    /// The `Last-Event-ID` the request carried (a client reconnecting to a stream), as sent.
    public let lastEventID: String?
    /// For a request carrying `Last-Event-ID`: the `id` of the same session's earlier request
    /// whose stream sent that id last (the stream this one resumes); nil when none did.
    public let resumes: UInt64?
    /// For a request upgraded to a WebSocket (docs/websocket.md): the messages both ways so far
    /// (the last 20; none yet just after the upgrade), their counts, and how it ended (nil while
    /// it is open: `isOpen`); nil for other requests.
    public let webSocket: WebSocketExchange?
    /// Under `MishapOptions.openAPI`: what the request did not fit in its operation's
    /// description (`/email: expected a string in format email, got 42`), which answered it
    /// 400 before any rule; empty for a request that fit, or that no operation describes.
    public let contractProblems: [String]

    init(_ entry: JournalEntry) {
        id = entry.id
        date = Date(timeIntervalSince1970: Double(entry.time) / 1000)
        method = entry.method
        path = entry.path
        query = entry.query.map { ($0.name, $0.value) }
        headers = entry.headers.map { ($0.name, $0.value) }
        body = Data(entry.body)
        session = entry.session
        endpoint = entry.endpoint
        rule = entry.rule
        status = entry.status
        fault = entry.fault?.rawValue
        stateChanges = entry.stateChanges.map { ($0.name, $0.from, $0.to) }
        bodyIncomplete = entry.bodyIncomplete
        range = entry.range
        contractProblems = entry.contractProblems ?? []
        eventStream = entry.eventStream.map(EventStreamOutcome.init)
        lastEventID = entry.lastEventID
        resumes = entry.resumesStream
        // The journal notes a socket at its first message; before that, its upgrade (101) has
        // no duration while it is open.
        webSocket = entry.webSocket.map(WebSocketExchange.init)
            ?? (entry.status == 101 && entry.durationNanoseconds == nil ? WebSocketExchange(WebSocketRecord()) : nil)
    }

    /// The first query parameter with this name (exact case), decoded; nil when there is none.
    /// `?userName=j%C3%B6rg` gives `queryValue("userName") == "jörg"`.
    public func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }
    /// The first header with this name, compared without regard to case (`header("retry-after")`
    /// finds `Retry-After`); nil when there is none.
    public func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
}
