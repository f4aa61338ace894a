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
}
