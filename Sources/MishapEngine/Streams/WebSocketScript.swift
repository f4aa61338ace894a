/// A WebSocket script as declared in a scenario (`websocket:`). Placeholder until the script
/// is written.
public struct WebSocketScript: Sendable {
    public init() {}
}
