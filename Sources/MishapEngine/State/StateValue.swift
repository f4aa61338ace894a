/// The value of a named state: a string, a whole number or a boolean, fixed by its declaration.
public enum StateValue: Sendable, Equatable, CustomStringConvertible {
    case string(String)
    case integer(Int)
    case boolean(Bool)

    /// What kind of value it is, as messages name it.
    public enum Kind: String, Sendable {
        case string, integer, boolean
    }

    public var kind: Kind {
        switch self {
        case .string: return .string
        case .integer: return .integer
        case .boolean: return .boolean
        }
    }

    /// The value as conditions and placeholders see it: `abc`, `3`, `true`.
    public var description: String {
        switch self {
        case .string(let text): return text
        case .integer(let number): return String(number)
        case .boolean(let flag): return flag ? "true" : "false"
        }
    }

    /// `text` read as a value of `kind` (`3` as an integer, `true` as a boolean), or nil when it
    /// is not one.
    public static func parse(_ text: String, as kind: Kind) -> StateValue? {
        switch kind {
        case .string: return .string(text)
        case .integer: return Int(text).map(StateValue.integer)
        case .boolean:
            switch text {
            case "true": return .boolean(true)
            case "false": return .boolean(false)
            default: return nil
            }
        }
    }
}

/// `"abc"`, `3` and `true` stand for state values in code (`mishap.setState(["outage": true])`).
extension StateValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
}
