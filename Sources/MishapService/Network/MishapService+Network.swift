import MishapEngine
import MishapHTTP
import MishapSupport

// Network profiles on top of whatever answers: the session's own (`PUT /__mishap/network`),
// else the answering rule's or endpoint's (`network:` in its file), else the server's default
// (`--network PRESET`). The `none` preset is a perfect network, even where a rule or the
// default names another.
extension MishapService {
    /// The profile `session` set and how long it stays: nil when it has none.
    public func network(session: String) -> (profile: NetworkProfile, remainingMilliseconds: Int64?, offlineMilliseconds: Int64?)? {
        let now = options.engine.clock()
        guard let setting = sessionNetworks.setting(session: session, now: now) else { return nil }
        let offline = setting.offlineUntil.map { max(0, $0 - now) }
        return (setting.profile, setting.endsAt.map { max(0, $0 - now) }, offline)
    }

    /// Puts `session`'s answers through `profile` from now on, for `milliseconds` (then it ends
    /// by itself) or until cleared; its offline window, if any, starts now. Replaces the
    /// session's previous profile.
    public func setNetwork(_ profile: NetworkProfile, session: String, milliseconds: Int? = nil) {
        sessionNetworks.set(profile, session: session, milliseconds: milliseconds, now: options.engine.clock(),
                            limit: options.engine.maxSessions)
    }

    /// Ends `session`'s profile (or every session's); returns whether there was one.
    @discardableResult
    public func clearNetwork(session: String?) -> Bool {
        sessionNetworks.remove(session: session)
    }

    /// Puts `plan`, the answer to `request`, through the profile that applies, and returns
    /// what it did (for the journal); nil when none applies. While no session has a profile,
    /// the plan declares none and the server has no default, a few loads.
    @inline(__always)
    func applyNetwork(_ request: Request, _ plan: inout ResponsePlan) -> NetworkShaping? {
        guard !sessionNetworks.isEmpty || plan.declaredNetwork != nil || defaultNetwork != nil else { return nil }
        return shapeAnswer(request, &plan)
    }

    private func shapeAnswer(_ request: Request, _ plan: inout ResponsePlan) -> NetworkShaping? {
        let now = options.engine.clock()
        var setting: SessionNetworks.Setting?
        if !sessionNetworks.isEmpty, let session = request.headerValue(options.engine.sessionHeader) {
            setting = sessionNetworks.setting(session: session, now: now)
        }
        guard let profile = setting?.profile ?? plan.declaredNetwork ?? defaultNetwork else { return nil }
        let offline = setting?.isOffline(now: now) ?? false
        guard offline || !profile.isNeutral else { return nil }
        let shaping = profile.shaping(networkRandom, offline: offline)
        Self.apply(shaping, to: &plan)
        return shaping
    }

    /// Changes `plan` as `shaping` says: its latency added to the plan's delay (a rule's fault
    /// still happens, after it); a loss resets the connection after the latency, an offline
    /// window at once, and neither is sent on to an upstream; what happens on the socket goes
    /// in `plan.network` (for a stream, also a latency per piece or per message).
    static func apply(_ shaping: NetworkShaping, to plan: inout ResponsePlan) {
        if let reason = shaping.resetReason {
            plan.fault = .reset
            plan.hang = false
            plan.dribble = nil
            plan.network = nil
            plan.delayMilliseconds = reason == "offline" ? 0 : min(plan.delayMilliseconds + shaping.addedLatencyMilliseconds,
                                                                   DurationText.maximumMilliseconds)
            if !plan.destination.isHere { plan.destination = .here }
        } else {
            plan.delayMilliseconds = min(plan.delayMilliseconds + shaping.addedLatencyMilliseconds, DurationText.maximumMilliseconds)
            if shaping.shapesDelivery || (plan.stream != nil && shaping.shapesStream) { plan.network = shaping }
        }
        plan.prepared = nil
    }

    /// The profile a request's head is read through, before any rule is asked: its session's,
    /// else the server's default (a rule's profile is known only once its body is read).
    private func uploadProfile(for head: Request) -> NetworkProfile? {
        guard !sessionNetworks.isEmpty || defaultNetwork != nil else { return nil }
        if options.admin && head.path.hasUTF8Prefix(AdminAPI.prefixBytes) { return nil }
        var session = head.headerValue(options.engine.sessionHeader)
        if let prefix = options.sessionPrefix,
           case .some(.some(let rewritten)) = SessionPath.rewrite(head, prefix: prefix, sessionHeader: options.engine.sessionHeader) {
            session = rewritten.headerValue(options.engine.sessionHeader)
        }
        if let session, let setting = sessionNetworks.setting(session: session, now: options.engine.clock()) {
            return setting.profile
        }
        return defaultNetwork
    }

    /// What happens to the body of `head` on its way in: the profile's upload rate and fault.
    /// For `answerEarly`, the answer is made here (a JSON error, noted in the journal as any
    /// other answer) and handed to the server to send before the body is read.
    public func uploadShaping(for head: Request) -> UploadShaping? {
        guard let profile = uploadProfile(for: head), var shaping = profile.uploadShaping else { return nil }
        if case .answerEarly(let status) = shaping.fault {
            var plan = ResponsePlan.error(status, reason: "answered before the request body was read (network profile '\(profile.displayName)': upload answerEarly \(status))")
            let network = NetworkShaping(profile: profile.displayName)
            note(head, &plan, unmatched: false, network: network)
            shaping.earlyAnswer = plan
        }
        return shaping
    }
}
