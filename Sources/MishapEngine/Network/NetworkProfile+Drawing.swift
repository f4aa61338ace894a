#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a profile does to one answer, drawn from a `RandomSource` (seeded by `--seed`, so a run
/// of requests made one after another repeats exactly): the latency and jitter added, whether
/// the answer is lost (a reset before any byte), and what is left for the server to do on the
/// socket.
extension NetworkProfile {
    /// The name shown in the journal and the log: the preset's, or `custom`.
    public var displayName: String { name ?? "custom" }

    /// What the profile does to one answer. `offline`: the session's offline window is open, so
    /// the answer is a reset at once (no latency, nothing drawn). Draws, in this order: the
    /// latency, the jitter, then whether the request is lost.
    public func shaping(_ random: RandomSource, offline: Bool = false) -> NetworkShaping {
        if offline {
            return NetworkShaping(profile: displayName, resetReason: "offline")
        }
        var added = latency.map { $0.milliseconds(random) } ?? 0
        if jitterMilliseconds > 0 { added += random.int(in: 0...jitterMilliseconds) }
        added = min(added, DurationText.maximumMilliseconds)
        let lost = loss > 0 && (loss >= 1 || random.unit() < loss)
        return NetworkShaping(
            profile: displayName, addedLatencyMilliseconds: added, downBytesPerSecond: downBytesPerSecond,
            chunkLatencyMilliseconds: latencyPerChunk ? (latency.map { $0.typicalMilliseconds } ?? 0) : 0,
            chunkJitterMilliseconds: latencyPerChunk ? jitterMilliseconds : 0,
            resetAfter: resetAfter, slowCloseMilliseconds: slowCloseMilliseconds, resetReason: lost ? "loss" : nil,
            messageLatency: latency, messageJitterMilliseconds: jitterMilliseconds)
    }

    /// What the profile does to a request body on its way in, or nil when nothing.
    public var uploadShaping: UploadShaping? {
        guard upBytesPerSecond != nil || upload != nil else { return nil }
        return UploadShaping(upBytesPerSecond: upBytesPerSecond, fault: upload)
    }
}

extension NetworkLatency {
    /// One draw, in milliseconds, within 0 and a day.
    public func milliseconds(_ random: RandomSource) -> Int {
        let drawn: Double
        switch self {
        case .fixed(let value):
            drawn = Double(value)
        case .uniform(let range):
            drawn = Double(random.int(in: range))
        case .normal(let mean, let deviation):
            drawn = Double(mean) + Double(deviation) * Self.standardNormal(random)
        case .logNormal(let median, let spread):
            drawn = Double(median) * pow(max(spread, 1), Self.standardNormal(random))
        }
        guard drawn.isFinite else { return drawn > 0 ? DurationText.maximumMilliseconds : 0 }
        return Int(min(max(drawn, 0), Double(DurationText.maximumMilliseconds)).rounded())
    }

    /// The latency a piece waits with `latencyPerChunk`: the fixed value, the range's middle,
    /// the mean or the median.
    public var typicalMilliseconds: Int {
        switch self {
        case .fixed(let value): return value
        case .uniform(let range): return (range.lowerBound + range.upperBound) / 2
        case .normal(let mean, _): return max(0, mean)
        case .logNormal(let median, _): return median
        }
    }

    /// A draw of the standard normal distribution (Box–Muller, from two uniform draws).
    static func standardNormal(_ random: RandomSource) -> Double {
        let u1 = max(random.unit(), 0x1.0p-53)
        let u2 = random.unit()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}
