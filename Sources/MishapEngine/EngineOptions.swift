import MishapSupport

/// Request headers that steer the engine, and its random seed.
public struct EngineOptions: Sendable {
    /// Requests carrying this header keep their own cycle positions, one set per value.
    public var sessionHeader: String
    /// Requests carrying this header are answered by the named rule of the matched endpoint,
    /// whatever its `when`.
    public var ruleHeader: String
    /// Seeds `chance`, delay ranges and garbage bytes so a run can be repeated; nil draws a seed.
    public var seed: UInt64?
    /// Sessions each cycle rule remembers; past that, the least recently seen start over.
    public var maxSessions: Int
    /// Monotonic milliseconds, for state that expires and rate-limit windows; tests give a
    /// clock of their own to step time.
    public var clock: @Sendable () -> Int64

    /// The default of `maxSessions`.
    public static let defaultMaxSessions = 10_000

    public init(sessionHeader: String = "X-Mishap-Session", ruleHeader: String = "X-Mishap-Rule", seed: UInt64? = nil,
                maxSessions: Int = EngineOptions.defaultMaxSessions,
                clock: @escaping @Sendable () -> Int64 = MonotonicClock.milliseconds) {
        self.clock = clock
        self.sessionHeader = sessionHeader
        self.ruleHeader = ruleHeader
        self.seed = seed
        self.maxSessions = max(1, maxSessions)
    }
}
