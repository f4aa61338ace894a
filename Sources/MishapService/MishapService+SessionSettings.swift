import MishapEngine
import MishapSupport
import Synchronization

/// What a test set for its session: how far its clock was moved forward (`SessionClocks`), and
/// how its waits are scaled (`retryAfterScale`). Kept by the service, so they outlive reloads;
/// bounded like the engine's sessions.
final class SessionSettings: Sendable {
    /// Each session's clock offset.
    let clocks = SessionClocks()
    private let scales = Mutex(ScaleTable())
    /// How many sessions have a scale: while zero, answers are not looked at.
    private let scaledCount = Atomic<Int>(0)

    /// Scales in two generations, as the engine keeps sessions: at most `limit` sessions, the
    /// least recently set forgotten first.
    struct ScaleTable {
        var current: [String: Double] = [:]
        var previous: [String: Double] = [:]
        var count: Int { current.count + previous.count }
    }

    /// Whether some session has a scale (a load, no lock).
    @inline(__always)
    var hasScales: Bool { scaledCount.load(ordering: .relaxed) != 0 }

    func retryAfterScale(session: String) -> Double? {
        guard hasScales else { return nil }
        return scales.withLock { $0.current[session] ?? $0.previous[session] }
    }

    /// Sets (or with nil, ends) `session`'s scale.
    func setRetryAfterScale(_ scale: Double?, session: String, limit: Int) {
        scales.withLock { table in
            table.current[session] = nil
            table.previous[session] = nil
            if let scale {
                if table.current.count >= max(1, limit / 2) {
                    table.previous = table.current
                    table.current = [:]
                }
                table.current[session] = scale
            }
            scaledCount.store(table.count, ordering: .relaxed)
        }
    }

    /// Ends the settings of `session`, or of every session.
    func end(session: String?) {
        if let session {
            clocks.reset(session: session)
            if hasScales { setRetryAfterScale(nil, session: session, limit: 1) }
        } else {
            clocks.removeAll()
            scales.withLock { table in
                table = ScaleTable()
                scaledCount.store(0, ordering: .relaxed)
            }
        }
    }
}

// A session's time, as its test set it: its clock moved forward (`POST /__mishap/clock`), and
// the waits it is told scaled down (`POST /__mishap/sessions/ID?retryAfterScale=0.01`).
extension MishapService {
    /// How many milliseconds `session`'s clock is ahead of the server's (0 without a session,
    /// or for one never moved): add it to a moment of the server's clock to read it in the
    /// session's time.
    public func clockOffset(session: String?) -> Int64 {
        sessionSettings.clocks.offset(session: session)
    }

    /// Moves `session`'s clock `milliseconds` forward, as if that time had passed for it alone:
    /// its state values set for a while come to their end, its quota windows counted per
    /// session let go of the requests that left them, its rules added at runtime for a while
    /// expire. Offsets add up; returns the session's offset after. Other sessions, the state
    /// and quotas shared by requests without a session, and quotas counted by a header or
    /// query value do not move.
    @discardableResult
    public func advanceClock(session: String, milliseconds: Int64) -> Int64 {
        reloading.withLock { _ in
            let offset = sessionSettings.clocks.advance(session: session, by: milliseconds, limit: options.engine.maxSessions)
            engine.moveClock(session: session, by: milliseconds)
            runtime.moveClock(session: session, by: milliseconds, now: options.engine.clock())
            return offset
        }
    }

    /// Forgets `session`'s clock offset (what expired stays expired: time does not go back).
    public func resetClock(session: String) {
        sessionSettings.clocks.reset(session: session)
    }

    /// The factor `Retry-After` and `RateLimit-Reset` are scaled by in `session`'s answers; nil
    /// when they are sent as the rules give them.
    public func retryAfterScale(session: String) -> Double? {
        sessionSettings.retryAfterScale(session: session)
    }

    /// Scales every `Retry-After` and `RateLimit-Reset` (and the `RateLimit` field's `t=`) sent to
    /// `session` by `scale` (over 0, at most 1): seconds multiplied and rounded up, at least 1
    /// unless they were 0; an HTTP date brought as close as its second allows. Nil ends it.
    public func setRetryAfterScale(_ scale: Double?, session: String) {
        sessionSettings.setRetryAfterScale(scale, session: session, limit: options.engine.maxSessions)
    }

    /// Ends what a session set for its time (its clock offset and its scale), or every session's.
    public func endSessionSettings(session: String?) {
        sessionSettings.end(session: session)
    }

    /// Scales the waits of `plan`, the answer to `request`, when its session asked for short
    /// waits: before the answer is noted, so the journal and the Retry-After check see what
    /// was sent. While no session has a scale, one atomic load.
    @inline(__always)
    func applySessionSettings(_ request: Request, _ plan: inout ResponsePlan) {
        guard sessionSettings.hasScales else { return }
        scaleWaits(request, &plan)
    }

    private func scaleWaits(_ request: Request, _ plan: inout ResponsePlan) {
        guard let session = request.headerValue(options.engine.sessionHeader),
              let scale = sessionSettings.retryAfterScale(session: session) else { return }
        var changed = false
        for index in plan.headers.indices {
            let name = plan.headers[index].name, value = plan.headers[index].value
            let scaled: String?
            if name.equalsIgnoringASCIICase("Retry-After") || name.equalsIgnoringASCIICase("RateLimit-Reset") {
                scaled = Self.scaledWait(value, by: scale, now: WallClock.nowMilliseconds())
            } else if name.equalsIgnoringASCIICase("RateLimit") {
                scaled = Self.scaledRateLimitField(value, by: scale)
            } else {
                continue
            }
            guard let scaled, scaled != value else { continue }
            plan.headers[index].value = scaled
            changed = true
        }
        // The server would otherwise send the ready-made form of the unscaled answer.
        if changed { plan.prepared = nil }
    }

    /// The structured `RateLimit` field (`"default";r=0;t=7`, draft-ietf-httpapi-ratelimit-headers)
    /// with each `t=` (the seconds until the window frees) scaled as delay-seconds are.
    static func scaledRateLimitField(_ value: String, by scale: Double) -> String {
        value.split(separator: ",", omittingEmptySubsequences: false).map { member in
            member.split(separator: ";", omittingEmptySubsequences: false).map { part -> String in
                let trimmed = part.trimmingASCIIWhitespace()
                guard trimmed.hasPrefix("t="), let scaled = scaledWait(String(trimmed.dropFirst(2)), by: scale, now: 0),
                      Int64(scaled) != nil else { return String(part) }
                return part.prefix { $0 == " " || $0 == "\t" } + "t=" + scaled
            }.joined(separator: ";")
        }.joined(separator: ",")
    }

    /// A wait scaled: delay-seconds (`17`) multiplied and rounded up to whole seconds, at least
    /// 1 unless it was 0; an HTTP date `now + (date - now) * scale`, rounded up to its next
    /// whole second (a date already past stays). Nil for a value that is neither.
    static func scaledWait(_ value: String, by scale: Double, now: Int64) -> String? {
        let trimmed = String(value.trimmingASCIIWhitespace())
        if !trimmed.isEmpty, trimmed.utf8.count <= 15, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
           let seconds = Int64(trimmed) {
            guard seconds > 0 else { return trimmed }
            // Less a hair: 3 × 0.1 is 0.30000000000000004 in binary, and must not become 2.
            let scaled = Int64((Double(seconds) * scale - 1e-9).rounded(.up))
            return String(max(1, min(seconds, scaled)))
        }
        guard let date = WallClock.secondsSinceEpoch(httpDate: trimmed) else { return nil }
        let dateMilliseconds = date * 1000
        guard dateMilliseconds > now else { return trimmed }
        let target = now + Int64((Double(dateMilliseconds - now) * scale).rounded(.up))
        return WallClock.httpDate(secondsSinceEpoch: Int((target + 999) / 1000))
    }
}
