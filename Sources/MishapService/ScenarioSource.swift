/// Where a service's scenarios come from.
public enum ScenarioSource: Sendable, Equatable {
    /// A folder of scenario files, read again on every reload.
    case directory(String)
    /// Scenario text held in memory (`name` stands for the file in messages).
    case yaml(String, name: String)
}
