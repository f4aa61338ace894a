/// Why a regular expression was refused: what is wrong, and where.
public struct PatternError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, such as `unbalanced ')': no group is open`.
    public let reason: String
    /// Where, in characters from the start of the expression; nil when the whole expression is at
    /// fault (it is too large).
    public let offset: Int?

    init(_ reason: String, at offset: Int?) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String {
        offset.map { "\(reason); at offset \($0)" } ?? reason
    }
}
