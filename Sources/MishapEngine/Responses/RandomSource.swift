import Synchronization

/// The random numbers behind `chance`, delay ranges and garbage bytes. Seeded, a run of
/// requests made one after another repeats exactly.
public final class RandomSource: Sendable {
    private let state: Mutex<UInt64>

    /// A generator starting from `seed`, or from the system's randomness when nil.
    public init(seed: UInt64? = nil) {
        state = Mutex(seed ?? UInt64.random(in: .min ... .max))
    }

    /// The next 64 random bits (SplitMix64).
    public func next() -> UInt64 {
        state.withLock { state in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A number in `0 ..< 1`.
    public func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// A number in `range`, every value equally likely.
    public func int(in range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % width)
    }
}
