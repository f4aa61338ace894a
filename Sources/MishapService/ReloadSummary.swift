/// What a reload did.
public struct ReloadSummary: Sendable {
    public var files: Int
    public var endpoints: Int
    public var rules: Int
    /// Cycle rules that kept their positions because their definition did not change.
    public var cyclesKept: Int
    /// How long reading and compiling the scenarios took.
    public var duration: Duration = .zero
}
