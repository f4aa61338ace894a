/// A response that is not one body but a conversation held open: a stream of Server-Sent
/// Events, or a WebSocket script. As declared in a scenario (`events:` or `websocket:` in a
/// response), ready to be filled in for one request.
public enum StreamTemplate: Sendable {
    /// `respond: { events: [...] }`: Server-Sent Events, then a clean end or a fault.
    case events(EventStreamTemplate)
    /// `respond: { websocket: {...} }`: an upgrade to WebSocket and a script on it.
    case webSocket(WebSocketScript)

    /// The stream for one request, its placeholders filled in.
    func plan(context: inout MatchContext) -> StreamPlan {
        switch self {
        case .events(let template): return .events(template.plan(context: &context))
        case .webSocket(let script): return .webSocket(script)
        }
    }
}

/// What the server holds open for one request instead of sending a body (`ResponsePlan.stream`).
public enum StreamPlan: Sendable {
    case events(EventStreamPlan)
    case webSocket(WebSocketScript)
}
