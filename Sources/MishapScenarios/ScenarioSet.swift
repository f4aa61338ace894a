import MishapEngine

/// Compiled scenarios: the endpoints of every file, and the files they came from.
public struct ScenarioSet: Sendable {
    public var endpoints: [Endpoint]
    /// The scenario files read, as shown in messages.
    public var files: [String]
    /// The counters of the cycle rules, by what identifies each rule (its endpoint and whole
    /// definition); a reload hands them to the new set so unchanged cycles keep their positions.
    public var cycleCounters: [String: CycleCounter] = [:]

    /// An engine answering with these scenarios.
    public func makeEngine(options: EngineOptions = EngineOptions()) -> Engine {
        Engine(endpoints: endpoints, options: options)
    }
}
