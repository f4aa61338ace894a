import MishapSupport

/// Rates as Mishap reads them: bytes per second with a unit (`20kB/s`, `1.5MB/s`, `512KiB/s`),
/// bits per second (`780kbps`, `2Mbit/s`), or a bare number of bytes per second. k and M are
/// 1000 and 1,000,000 (as the Network Link Conditioner's figures are); Ki and Mi 1024 and 1024².
public enum BandwidthText {
    /// The slowest rate accepted: 1 byte per second.
    public static let minimum = 1
    /// The fastest: 10 GB/s (a profile that fast shapes nothing).
    public static let maximum = 10_000_000_000

    public static func bytesPerSecond(_ text: String) -> Result<Int, Problem> {
        let units: [(suffix: String, factor: Double)] = [
            ("KiB/s", 1024), ("MiB/s", 1_048_576), ("GiB/s", 1_073_741_824),
            ("kB/s", 1000), ("KB/s", 1000), ("MB/s", 1_000_000), ("GB/s", 1_000_000_000), ("B/s", 1),
            ("kbit/s", 125), ("Mbit/s", 125_000), ("Gbit/s", 125_000_000), ("bit/s", 0.125),
            ("kbps", 125), ("Mbps", 125_000), ("Gbps", 125_000_000), ("bps", 0.125),
        ]
        let trimmed = String(text.trimmingASCIIWhitespace())
        var number = Substring(trimmed)
        var factor = 1.0
        for unit in units where trimmed.hasSuffix(unit.suffix) {
            number = trimmed.dropLast(unit.suffix.count)
            factor = unit.factor
            break
        }
        guard let value = Double(number.trimmingASCIIWhitespace()), value.isFinite else { return .failure(.malformed) }
        let rate = value * factor
        guard rate >= Double(minimum) else { return .failure(.tooSlow) }
        guard rate <= Double(maximum) else { return .failure(.tooFast) }
        return .success(Int(rate.rounded()))
    }

    public enum Problem: Error, Sendable, Equatable {
        case malformed, tooSlow, tooFast

        /// The problem in words, after the name of what was given.
        public var words: String {
            switch self {
            case .malformed: return "must be a rate, like '20kB/s', '1.5MB/s' or '780kbps' (a bare number is bytes per second)"
            case .tooSlow: return "must be at least 1 byte per second (for no answer at all, use 'loss' or 'offline')"
            case .tooFast: return "must be at most 10 GB/s"
            }
        }
    }

    /// A rate as people read it: `30 kB/s`, `1.25 MB/s`, `512 B/s`.
    public static func text(_ bytesPerSecond: Int) -> String {
        func trimmed(_ value: Double) -> String {
            let rounded = (value * 100).rounded() / 100
            return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        }
        if bytesPerSecond >= 1_000_000 { return "\(trimmed(Double(bytesPerSecond) / 1_000_000)) MB/s" }
        if bytesPerSecond >= 1000 { return "\(trimmed(Double(bytesPerSecond) / 1000)) kB/s" }
        return "\(bytesPerSecond) B/s"
    }
}
