/// SplitMix64: a small, fast generator whose sequence depends only on its seed, so any fuzz or
/// random case is rebuilt exactly from the seed and its number.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// A generator for one case, independent of the order in which cases run.
    public init(seed: UInt64, case index: Int) {
        var mixer = SeededRandom(seed: seed ^ (UInt64(bitPattern: Int64(index)) &* 0xD1B5_4A32_D192_ED03))
        state = mixer.next()
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`, every one equally likely.
    public mutating func below(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &self) }

    /// A number in `range`, every one equally likely.
    public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// True with `probability` (from 0 to 1).
    public mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }

    /// Any byte.
    public mutating func byte() -> UInt8 { UInt8.random(in: 0...255, using: &self) }

    /// One of `items`, every one equally likely.
    public mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// One of `choices`, drawn in proportion to its weight.
    public mutating func weighted<T>(_ choices: [(Int, T)]) -> T {
        var draw = int(0...choices.reduce(0) { $0 + $1.0 } - 1)
        for (weight, value) in choices {
            if draw < weight { return value }
            draw -= weight
        }
        return choices[choices.count - 1].1
    }

    /// The next value's remainder by `bound`: one value per draw, slightly biased toward small
    /// numbers. The random regular expressions are drawn this way; elsewhere use `below(_:)`.
    public mutating func remainder(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// One of `items`, chosen by `remainder(_:)`.
    public mutating func pickByRemainder<T>(_ items: [T]) -> T { items[remainder(items.count)] }
}
