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
    /// The value is present and equal to the text of a template, filled in for the request:
    /// `Bearer {{state.accessToken}}`.
    case equalsText(Template)
    /// The value is a whole number within the bounds: `atLeast`, `atMost`, `lessThan`, `greaterThan`.
    case number(min: Int?, max: Int?)
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
            // Printable ASCII is one character a byte (CR LF, two bytes, is one character, so
            // control bytes take the grapheme count, as does anything beyond ASCII).
            let printable = value.utf8.withContiguousStorageIfAvailable { $0.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }
            let count = printable == true ? value.utf8.count : value.count
            return (min.map { count >= $0 } ?? true) && (max.map { count <= $0 } ?? true)
        case .matches(let pattern): return pattern.matches(value)
        case .prefix(let prefix): return ASCIIAffix.hasPrefix(value, prefix) ?? value.hasPrefix(prefix)
        case .suffix(let suffix): return ASCIIAffix.hasSuffix(value, suffix) ?? value.hasSuffix(suffix)
        case .contains(let part): return ASCIIAffix.contains(value, part) ?? value.contains(part)
        case .number(let min, let max):
            guard let number = Int(value) else { return false }
            return (min.map { number >= $0 } ?? true) && (max.map { number <= $0 } ?? true)
        case .equalsText(let template):
            guard let bytes = template.staticBytes else { return false }
            return value.utf8.elementsEqual(bytes)
        case .absent, .present, .not, .all: return false
        }
    }

    /// Whether the condition holds for `value` in the request being matched, whose values
    /// fill in `equalsText` templates.
    func holds(for value: String?, in context: inout MatchContext) -> Bool {
        switch self {
        case .equalsText(let template):
            guard let value else { return false }
            return value.utf8.elementsEqual(template.render(context: &context))
        case .not(let inner): return !inner.holds(for: value, in: &context)
        case .all(let inner):
            for condition in inner where !condition.holds(for: value, in: &context) { return false }
            return true
        default:
            return holds(for: value)
        }
    }

    /// Whether `holds(for:)` decides the condition from the value alone (no placeholders to
    /// fill in from the request or its state).
    var dependsOnValueAlone: Bool {
        switch self {
        case .equalsText: return false
        case .not(let inner): return inner.dependsOnValueAlone
        case .all(let inner): return inner.allSatisfy { $0.dependsOnValueAlone }
        default: return true
        }
    }

    /// Whether testing the condition reads state values.
    var readsState: Bool {
        switch self {
        case .equalsText(let template): return template.readsState
        case .not(let inner): return inner.readsState
        case .all(let inner): return inner.contains { $0.readsState }
        default: return false
        }
    }
}
