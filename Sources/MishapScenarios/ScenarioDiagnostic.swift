/// One problem found in a scenario file, with where it is.
public struct ScenarioDiagnostic: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    /// 1-based line, as editors count.
    public var line: Int
    /// 1-based column, counted in Unicode scalars.
    public var column: Int
    public var message: String

    public init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// `scenarios/login.yaml:14:7: unknown key 'stauts' (did you mean 'status'?)`
    public var description: String { "\(file):\(line):\(column): \(message)" }

    /// At most `maximum` of `warnings`, then one more at the first left out saying how many were.
    static func capped(_ warnings: [ScenarioDiagnostic], maximum: Int = 100) -> [ScenarioDiagnostic] {
        guard warnings.count > maximum else { return warnings }
        let first = warnings[maximum]
        return Array(warnings.prefix(maximum)) + [ScenarioDiagnostic(file: first.file, line: first.line, column: first.column,
            message: "warning: \(warnings.count - maximum) more warning(s) not shown (at most \(maximum) are); the first is here")]
    }
}
