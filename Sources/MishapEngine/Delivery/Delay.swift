/// How long to wait before answering.
public enum Delay: Sendable, Equatable {
    /// Always this many milliseconds.
    case fixed(Int)
    /// A number of milliseconds drawn uniformly from the range for each request.
    case uniform(ClosedRange<Int>)

    func milliseconds(_ random: RandomSource) -> Int {
        switch self {
        case .fixed(let value): return value
        case .uniform(let range): return random.int(in: range)
        }
    }
}
