/// Why a request's answer cannot be written down as a scenario: a method scenario files have
/// no word for, a path an endpoint cannot name, a query name a rule cannot test.
public struct Unrecordable: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reason, in a sentence fragment (`its path holds a space`).
    public let reason: String

    /// The reason `reason`.
    public init(_ reason: String) {
        self.reason = reason
    }

    /// The reason.
    public var description: String { reason }
}
