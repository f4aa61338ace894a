import Synchronization

/// A clock the test moves by hand: state expiry, quota windows and rule lifetimes without
/// waiting, so no test depends on how fast a loaded machine runs it. Pass `function` as
/// `EngineOptions.clock`.
public final class ManualClock: Sendable {
    private let milliseconds = Atomic<Int64>(1_000_000)

    public init() {}

    public var now: Int64 { milliseconds.load(ordering: .relaxed) }
    public func advance(_ step: Int64) { milliseconds.add(step, ordering: .relaxed) }
    public var function: @Sendable () -> Int64 { { self.now } }
}
