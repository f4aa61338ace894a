import MishapEngine

extension FileCompiler {
    /// `events:` with `repeat`, `heartbeat` and the stream's `fault`. Nil, after reporting,
    /// when they are wrong. Placeholder until the events are written.
    mutating func compileEventStream(_ keyed: KeyedNodes) -> EventStreamTemplate? {
        if let node = keyed.key("events") { error("'events' is not supported yet", at: node) }
        return nil
    }
}
