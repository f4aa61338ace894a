@_exported import class MishapEngine.NetworkProfile
@_exported import enum MishapEngine.NetworkLatency
@_exported import enum MishapEngine.ByteMark
@_exported import enum MishapEngine.UploadFault
import MishapEngine
import MishapService

/// A network a session's answers go through: a preset (`.edge`, `.threeG`), or a profile of
/// one's own (`.custom(latency: .seconds(2))`, `.profile(...)`). See docs/network.md.
public struct NetworkCondition: Sendable {
    public let profile: NetworkProfile

    public init(_ profile: NetworkProfile) { self.profile = profile }

    /// The preset named `name` (`edge`, `3g`, `very-bad-network`); nil for a name that is none.
    public static func preset(_ name: String) -> NetworkCondition? { NetworkPresets.named(name).map(NetworkCondition.init) }

    public static let none = named("none")
    public static let wifi = named("wifi")
    public static let lte = named("lte")
    public static let dsl = named("dsl")
    public static let threeG = named("3g")
    public static let edge = named("edge")
    public static let veryBadNetwork = named("very-bad-network")
    public static let highLatency = named("high-latency")
    public static let fullLoss = named("100-percent-loss")

    /// A profile written out (`NetworkProfile` has every knob).
    public static func profile(_ profile: NetworkProfile) -> NetworkCondition { NetworkCondition(profile) }

    /// A profile of the common knobs: `latency` added before each answer (plus up to `jitter`),
    /// the response sent at `downBytesPerSecond`, the request body read at `upBytesPerSecond`,
    /// a fraction `loss` of requests reset, and `offline` from now for that long.
    public static func custom(latency: Duration? = nil, jitter: Duration = .zero, downBytesPerSecond: Int? = nil,
                              upBytesPerSecond: Int? = nil, loss: Double = 0, offline: Duration? = nil) -> NetworkCondition {
        NetworkCondition(NetworkProfile(
            latency: latency.map { .fixed(RunningMishap.milliseconds($0)) }, jitterMilliseconds: RunningMishap.milliseconds(jitter),
            downBytesPerSecond: downBytesPerSecond, upBytesPerSecond: upBytesPerSecond, loss: min(max(loss, 0), 1),
            offlineMilliseconds: offline.map(RunningMishap.milliseconds)))
    }

    private static func named(_ name: String) -> NetworkCondition { NetworkCondition(NetworkPresets.named(name)!) }
}

extension MishapSession {
    /// Puts this session's answers through `network` (`.edge`, `.custom(latency: .seconds(2))`),
    /// for `duration` (then it ends by itself) or until `clearNetwork()`. Other sessions keep
    /// theirs.
    public func setNetwork(_ network: NetworkCondition, for duration: Duration? = nil) throws {
        try requireServer().setNetwork(network, session: self, for: duration)
    }

    /// Ends this session's network profile: its answers come as the rules give them again.
    public func clearNetwork() throws {
        try requireServer().clearNetwork(session: self)
    }

    /// The profile this session's answers go through now (nil: none, or it ended).
    public func network() throws -> NetworkProfile? {
        try requireServer().service.network(session: id)?.profile
    }
}

extension RunningMishap {
    /// Puts `session`'s answers through `network` (see `MishapSession.setNetwork(_:for:)`).
    public func setNetwork(_ network: NetworkCondition, session: MishapSession, for duration: Duration? = nil) throws {
        var milliseconds: Int?
        if let duration {
            milliseconds = Self.milliseconds(duration)
            guard milliseconds! > 0, milliseconds! <= 86_400_000 else {
                throw SessionTimeError(reason: "a network profile lasts more than 0 and at most a day; \(duration) is not")
            }
        }
        service.setNetwork(network.profile, session: session.id, milliseconds: milliseconds)
    }

    /// Ends `session`'s network profile.
    public func clearNetwork(session: MishapSession) {
        service.clearNetwork(session: session.id)
    }
}
