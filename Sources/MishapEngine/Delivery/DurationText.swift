/// Durations as Mishap reads them: a number with a unit (`300ms`, `1.5s`, `2m`, `1h`), or a bare
/// number, whose unit depends on where it is written. In scenario files a bare number is
/// milliseconds (`delay: 300`); on the command line and in admin calls it is seconds
/// (`--for 30`, `?ttl=30`, `{"for": 30}`), as every duration flag has always read it.
public enum DurationText {
    /// The longest duration accepted: a day.
    public static let maximumMilliseconds = 86_400_000

    /// What a number without a unit counts.
    public enum BareUnit: Sendable {
        /// Scenario files: `delay: 300` is 300 ms.
        case milliseconds
        /// The command line and the admin API: `--for 30` is 30 s.
        case seconds

        /// Milliseconds in one.
        var factor: Double { self == .milliseconds ? 1 : 1000 }
    }

    /// Why `text` is not a duration, or its milliseconds (rounded to the nearest); a bare
    /// number counts `bare`.
    public static func milliseconds(_ text: String, bare: BareUnit = .milliseconds) -> Result<Int, Problem> {
        let units: [(suffix: String, factor: Double)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000)]
        var number = Substring(text)
        var factor = bare.factor
        for unit in units where text.hasSuffix(unit.suffix) {
            number = text.dropLast(unit.suffix.count)
            factor = unit.factor
            break
        }
        guard let value = Double(number), value.isFinite, (value * factor).isFinite else {
            return .failure(.malformed(bare))
        }
        let milliseconds = value * factor
        guard milliseconds >= 0 else { return .failure(.negative) }
        guard milliseconds <= Double(maximumMilliseconds) else { return .failure(.tooLong) }
        return .success(Int(milliseconds.rounded()))
    }

    public enum Problem: Error, Sendable, Equatable {
        /// Not a number, with or without a unit; what a bare number would have counted.
        case malformed(BareUnit)
        case negative, tooLong

        /// The problem in words, after the name of what was given: `must not be negative`.
        public var words: String {
            switch self {
            case .malformed(.milliseconds): return "must be a duration in milliseconds, like 300 or '2s' (units: ms, s, m, h)"
            case .malformed(.seconds): return "must be a duration in seconds, like 30 or '500ms' (units: ms, s, m, h)"
            case .negative: return "must not be negative"
            case .tooLong: return "must be at most a day"
            }
        }
    }
}
