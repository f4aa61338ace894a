import MishapEngine

/// Compiled scenarios: the endpoints of every file, and the files they came from.
public struct ScenarioSet: Sendable {
    public var endpoints: [Endpoint]
    /// The scenario files read, as shown in messages.
    public var files: [String]
    /// The counters of the cycle rules, by what identifies each rule (its endpoint and whole
    /// definition); a reload hands them to the new set so unchanged cycles keep their positions.
    public var cycleCounters: [String: CycleCounter] = [:]
    /// The counts of the quotas, by what identifies each, carried over a reload as cycle counters are.
    public var quotaCounters: [String: QuotaCounter] = [:]
    /// The declared state values (`state:`) of every session; nil when none is declared. A
    /// reload keeps the values of unchanged declarations.
    public var state: StateStore?
    /// What loaded but is probably a mistake (a rule that can never answer), each located as
    /// `file:line:column: warning: ...`. Warnings never refuse a load.
    public var warnings: [ScenarioDiagnostic] = []
    /// How long reading and compiling the files took.
    public var loadDuration: Duration = .zero

    /// How many rules the endpoints have in all.
    public var ruleCount: Int { endpoints.reduce(0) { $0 + $1.rules.count } }

    /// What a log line says of the set: `loaded 100000 rule(s) on 24001 endpoint(s) from 1
    /// file(s) in 1.92 s`, with `verb` in place of `loaded`.
    public func loadSummary(_ verb: String = "loaded") -> String {
        let milliseconds = loadDuration.components.seconds * 1000 + loadDuration.components.attoseconds / 1_000_000_000_000_000
        let seconds = "\(milliseconds / 1000).\(String(milliseconds % 1000 / 10 + 100).dropFirst())"
        return "\(verb) \(ruleCount) rule(s) on \(endpoints.count) endpoint(s) from \(files.count) file(s) in \(seconds) s"
    }

    /// An engine answering with these scenarios.
    public func makeEngine(options: EngineOptions = EngineOptions(), runtime: RuntimeRules? = nil) -> Engine {
        Engine(endpoints: endpoints, options: options, state: state, runtime: runtime)
    }
}
