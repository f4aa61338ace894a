import MishapEngine
import MishapSupport
import MishapUpstream

/// Requests no rule answers, sent on to the upstream server (`--upstream`) and its answers
/// passed back: the engine's 404 becomes a plan that names the upstream, the HTTP server holds
/// the connection and calls `forward`, and the answer (or a 502 or 504 saying why there is
/// none) is carried out when it comes.
extension MishapService {
    /// Whether no rule answered `plan`'s request: the engine's 404, with no endpoint and no fault.
    static func isUnanswered(_ plan: ResponsePlan) -> Bool {
        plan.endpoint == nil && plan.status == 404 && plan.fault == nil && plan.upstream == nil
    }

    /// The plan that sends a request on to the upstream at `url`, carried out when its answer comes.
    static func forwardPlan(_ url: String) -> ResponsePlan {
        var plan = ResponsePlan(status: 502)
        plan.upstream = url
        return plan
    }

    /// Settles where `plan` goes: a request no rule answers to the upstream, when there is one,
    /// and a rule's `proxy: upstream` to its URL (or, without one, a 502 that says so).
    func route(_ plan: inout ResponsePlan) {
        if let upstream = plan.upstream {
            guard upstream == ResponsePlan.serverUpstream else { return }
            if let url = options.upstream?.url {
                plan.upstream = url
            } else {
                let reason = "rule '\(plan.rule ?? "")' of \(plan.endpoint ?? "its endpoint") sends requests to the upstream (proxy: upstream), but Mishap was started without --upstream"
                var error = ResponsePlan.error(502, reason: reason)
                error.endpoint = plan.endpoint
                error.rule = plan.rule
                error.runtimeRule = plan.runtimeRule
                error.stateChanges = plan.stateChanges
                plan = error
            }
        } else if let url = options.upstream?.url, Self.isUnanswered(plan) {
            plan = Self.forwardPlan(url)
        }
    }

    /// Sends `request` on to its plan's upstream and answers with what comes back. The upstream
    /// gets the request as the rules saw it: a request through the session prefix
    /// (`/__session/ID/PATH`) as `PATH` with the session header, and `mishap record` is told of
    /// that one. A target that is Mishap itself, or a request that has passed too many proxies,
    /// is answered 508 without being sent.
    public func forward(_ original: Request, plan: ResponsePlan, client: String, scheme: String,
                        answer: @escaping @Sendable (ResponsePlan, MemoryLease?) -> Void) {
        guard let upstream = plan.upstream else {
            answer(.error(502, reason: "this request names no upstream to go to"), nil)
            return
        }
        let request = upstreamRequest(original)
        if let problem = loopGuard.problem(sending: request, to: upstream) {
            journal.upstreamAnswered(plan.completionTag, status: 508, milliseconds: 0)
            logger.warning("\(request.method) \(request.path) was not sent on to \(upstream): it \(problem)")
            answer(Forwarding.delivered(.error(508, reason: "not sent on to \(upstream): it \(problem)"), as: plan), nil)
            return
        }
        let upstreamCalls: UpstreamClient
        switch upstreamClient.client() {
        case .success(let started):
            upstreamCalls = started
        case .failure(let failure):
            journal.upstreamAnswered(plan.completionTag, status: 502, milliseconds: 0)
            answer(Forwarding.delivered(.error(502, reason: "requests cannot go to the upstream \(upstream): \(failure.message)"), as: plan), nil)
            return
        }
        loopGuard.arm()
        let call = Forwarding.call(for: request, upstream: upstream, client: client, scheme: scheme, via: loopGuard.viaEntry)
        let id = plan.completionTag
        let origin = options.cors == nil ? nil : request.headerValue("Origin")
        upstreamCalls.send(call) { [self] result, report in
            var answered = Forwarding.delivered(Forwarding.plan(for: result, upstream: upstream, head: request.method == "HEAD"), as: plan)
            switch result {
            case .answered(let status, _, _, let milliseconds):
                journal.upstreamAnswered(id, status: status, milliseconds: milliseconds, note: report.note)
                if let note = report.note {
                    logger.warning("upstream \(upstream) answered \(request.method) \(request.path) with a head HTTP/1.1 does not allow: \(note)")
                }
            case .failed(let failure, let milliseconds):
                journal.upstreamAnswered(id, status: answered.status, milliseconds: milliseconds, note: report.note)
                if failure.kind != .cancelled {
                    let what = failure.kind == .memory || failure.kind == .malformed ? "'s answer was not passed on for" : " gave no answer to"
                    logger.warning("upstream \(upstream)\(what) \(request.method) \(request.path) (\(failure.kind.rawValue)): \(failure.message); answered \(answered.status)")
                }
            }
            // Before the client is answered, so what is recorded of a call is noted by the time
            // its client has the answer (the recorder writes its files within 100 ms, and all of
            // them when it is flushed at Ctrl-C, so nothing is lost).
            options.upstreamAnswers?(request, result)
            if let cors = options.cors, let origin { answered = cors.decorateUpstream(answered, origin: origin) }
            answer(answered, report.memory)
        }
    }

    /// `request` as its upstream gets it: as the rules saw it (through the session prefix, the
    /// path it stands for with the session header).
    private func upstreamRequest(_ request: Request) -> Request {
        if let prefix = options.sessionPrefix,
           case .some(.some(let rewritten)) = SessionPath.rewrite(request, prefix: prefix, sessionHeader: options.engine.sessionHeader) {
            return rewritten
        }
        return request
    }

    /// Tells the service where its server listens (the address it is bound to, its HTTP and
    /// HTTPS ports), so that a `proxy` or `--upstream` pointing there is refused.
    public func listening(host: String, ports: [UInt16]) {
        loopGuard.listen(host: host, ports: ports)
    }

    /// Cancels the requests still waiting for the upstream and ends its client's thread.
    public func stopUpstream() {
        upstreamClient.stop()
    }
}
