/// Server-Sent Events as declared in a scenario (`events:`, `repeat`, `heartbeat`, a stream
/// `fault`). Placeholder until the events are written.
public struct EventStreamTemplate: Sendable {
    public init() {}

    func plan(context: inout MatchContext) -> EventStreamPlan {
        EventStreamPlan()
    }
}

/// The events one request is sent, filled in.
public struct EventStreamPlan: Sendable {
    public init() {}
}
