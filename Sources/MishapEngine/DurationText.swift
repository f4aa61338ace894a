/// Durations as scenario files and admin calls write them: milliseconds as a number (`300`) or
/// with a unit: `300ms`, `1.5s`, `2m`, `1h`.
public enum DurationText {
    /// The longest duration accepted: a day.
    public static let maximumMilliseconds = 86_400_000

    /// Why `text` is not a duration, or its milliseconds.
    public static func milliseconds(_ text: String) -> Result<Int, Problem> {
        let units: [(suffix: String, factor: Double)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000)]
        var number = Substring(text)
        var factor = 1.0
        for unit in units where text.hasSuffix(unit.suffix) {
            number = text.dropLast(unit.suffix.count)
            factor = unit.factor
            break
        }
        guard let value = Double(number), value.isFinite, (value * factor).isFinite else {
            return .failure(.malformed)
        }
        let milliseconds = value * factor
        guard milliseconds >= 0 else { return .failure(.negative) }
        guard milliseconds <= Double(maximumMilliseconds) else { return .failure(.tooLong) }
        return .success(Int(milliseconds.rounded()))
    }

    public enum Problem: Error, Sendable {
        case malformed, negative, tooLong

        /// The problem in words, after the name of what was given: `must not be negative`.
        public var words: String {
            switch self {
            case .malformed: return "must be a duration in milliseconds, like 300 or '2s' (units: ms, s, m, h)"
            case .negative: return "must not be negative"
            case .tooLong: return "must be at most a day"
            }
        }
    }
}
