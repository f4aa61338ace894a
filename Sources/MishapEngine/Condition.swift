// `Condition.matches` takes a `Pattern`: whoever imports the engine to build conditions gets the
// pattern module with it.
@_exported import MishapPattern

/// A test on one request value (which may be absent).
public indirect enum Condition: Sendable {
    /// The value is present and equal to the string.
    case equals(String)
    /// The value is present and equal to one of the strings.
    case oneOf(Set<String>)
    /// The value is missing.
    case absent
    /// The value is present (possibly empty).
    case present
    /// The value is present and empty.
    case empty
    /// The value is present and its length in characters (grapheme clusters, as Swift's
    /// `String.count`) lies within the bounds.
    case length(min: Int?, max: Int?)
    /// The value is present and the regular expression matches somewhere in it.
    case matches(Pattern)
    /// The value is present and starts with the string.
    case prefix(String)
    /// The value is present and ends with the string.
    case suffix(String)
    /// The value is present and contains the string.
    case contains(String)
    /// The inner condition does not hold (an absent value satisfies `not` of any test on it).
    case not(Condition)
    /// Every inner condition holds.
    case all([Condition])

    /// Whether the condition holds for `value` (`nil` when the request lacks it).
    public func holds(for value: String?) -> Bool {
        switch self {
        case .absent: return value == nil
        case .present: return value != nil
        case .not(let inner): return !inner.holds(for: value)
        case .all(let inner): return inner.allSatisfy { $0.holds(for: value) }
        default: break
        }
        guard let value else { return false }
        switch self {
        case .equals(let expected): return value == expected
        case .oneOf(let options): return options.contains(value)
        case .empty: return value.isEmpty
        case .length(let min, let max):
            let count = value.count
            return (min.map { count >= $0 } ?? true) && (max.map { count <= $0 } ?? true)
        case .matches(let pattern): return pattern.matches(value)
        case .prefix(let prefix): return value.hasPrefix(prefix)
        case .suffix(let suffix): return value.hasSuffix(suffix)
        case .contains(let part): return value.contains(part)
        case .absent, .present, .not, .all: return false
        }
    }
}
