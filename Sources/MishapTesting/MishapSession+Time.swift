import Foundation

// Time a test can move, for one session: its clock (tokens expire, quota windows pass, outage
// windows end, without waiting) and the waits it is told (`Retry-After` scaled down).
extension MishapSession {
    /// Moves this session's clock forward by `duration`, as if that time had passed for it
    /// alone: its state values set for a while expire, its quota windows counted per session
    /// pass, its rules added for a while end. Other sessions do not move. Offsets add up.
    public func advanceClock(by duration: Duration) throws {
        try requireServer().advanceClock(session: self, by: duration)
    }

    /// Forgets this session's clock offset (what expired stays expired).
    public func resetClock() throws {
        try requireServer().resetClock(session: self)
    }

    /// How far this session's clock was moved forward.
    public func clockOffset() throws -> Duration {
        try requireServer().clockOffset(session: self)
    }

    /// Scales every `Retry-After` and `RateLimit-Reset` sent to this session by `scale` (over 0,
    /// at most 1): `17` becomes `1` at 0.01 (rounded up to whole seconds, at least 1). A client
    /// that honours `Retry-After` then gets through a maintenance window in seconds.
    public func scaleRetryAfter(by scale: Double) throws {
        try requireServer().scaleRetryAfter(by: scale, session: self)
    }

    /// Sends `Retry-After` and `RateLimit-Reset` to this session as the rules give them again.
    public func resetRetryAfterScale() throws {
        try requireServer().resetRetryAfterScale(session: self)
    }
}

extension RunningMishap {
    /// Moves `session`'s clock forward by `duration` (see `MishapSession.advanceClock(by:)`).
    /// Throws `SessionTimeError` for a duration not over 0 or over a day.
    public func advanceClock(session: MishapSession, by duration: Duration) throws {
        let milliseconds = Self.milliseconds(duration)
        guard milliseconds > 0, milliseconds <= 86_400_000 else {
            throw SessionTimeError(reason: "the clock moves forward by more than 0 and at most a day at a time; \(duration) is not")
        }
        service.advanceClock(session: session.id, milliseconds: Int64(milliseconds))
    }

    /// Forgets `session`'s clock offset.
    public func resetClock(session: MishapSession) {
        service.resetClock(session: session.id)
    }

    /// How far `session`'s clock was moved forward.
    public func clockOffset(session: MishapSession) -> Duration {
        .milliseconds(service.clockOffset(session: session.id))
    }

    /// Scales the `Retry-After` and `RateLimit-Reset` sent to `session` (see
    /// `MishapSession.scaleRetryAfter(by:)`). Throws `SessionTimeError` for a scale not over 0 and
    /// at most 1.
    public func scaleRetryAfter(by scale: Double, session: MishapSession) throws {
        guard scale.isFinite, scale > 0, scale <= 1 else {
            throw SessionTimeError(reason: "a Retry-After scale is over 0 and at most 1; \(scale) is not")
        }
        service.setRetryAfterScale(scale, session: session.id)
    }

    /// Sends `Retry-After` and `RateLimit-Reset` to `session` as the rules give them again.
    public func resetRetryAfterScale(session: MishapSession) {
        service.setRetryAfterScale(nil, session: session.id)
    }
}

/// A clock move or a scale out of range; nothing changed.
public struct SessionTimeError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}
