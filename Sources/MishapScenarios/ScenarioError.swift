/// Scenarios that cannot be loaded: every problem found, in file order.
public struct ScenarioError: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [ScenarioDiagnostic]

    public init(diagnostics: [ScenarioDiagnostic]) {
        self.diagnostics = diagnostics
    }

    public var description: String {
        diagnostics.map(\.description).joined(separator: "\n")
    }
}
