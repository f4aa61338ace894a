import MishapEngine
import MishapSupport
import MishapUpstream

/// Requests sent on to an upstream server and its answers passed back: those no rule answers
/// to the server's (`--upstream`), and those a rule's `proxy` sends. The engine's answer names
/// where it goes (`ResponsePlan.Destination`), the HTTP server holds the connection and calls
/// `forward`, and the answer (or a 502 or 504 saying why there is none) is carried out when it
/// comes.
extension MishapService {
    /// Gives `plan`, of a rule that sends its request to the server's upstream (`proxy:
    /// upstream`), its way: unchanged with `--upstream`, else a 502 that says it is missing, for
    /// the same endpoint and rule. In place: the plan is on the path of every request, and one
    /// returned anew was copied out and the original destroyed.
    func route(_ plan: inout ResponsePlan) {
        guard case .serverUpstream = plan.destination, options.upstream?.url == nil else { return }
        let reason = "rule '\(plan.bookkeeping.rule ?? "")' of \(plan.bookkeeping.endpoint ?? "its endpoint") sends requests to the upstream (proxy: upstream), but Mishap was started without --upstream"
        var error = ResponsePlan.error(502, reason: reason)
        error.bookkeeping = plan.bookkeeping
        plan = error
    }

    /// The base URL a plan's request goes to: a rule's own, or the server's upstream (nil
    /// without one); nil for a plan answered here.
    func upstreamURL(_ destination: ResponsePlan.Destination) -> String? {
        switch destination {
        case .here: nil
        case .serverUpstream: options.upstream?.url
        case .url(let url): url
        }
    }

    /// Sends `request` on to its plan's upstream and answers with what comes back. The upstream
    /// gets the request as the rules saw it: a request through the session prefix
    /// (`/__session/ID/PATH`) as `PATH` with the session header, and `mishap record` is told of
    /// that one. A target that is Mishap itself, or a request that has passed too many proxies,
    /// is answered 508 without being sent.
    public func forward(_ original: Request, plan: ResponsePlan, client: String, scheme: String,
                        answer: @escaping @Sendable (ResponsePlan, MemoryLease?) -> Void) {
        guard let upstream = upstreamURL(plan.destination) else {
            answer(.error(502, reason: "this request names no upstream to go to"), nil)
            return
        }
        let request = upstreamRequest(original)
        if let problem = loopGuard.problem(sending: request, to: upstream) {
            journal.upstreamAnswered(plan.bookkeeping.completionTag, status: 508, milliseconds: 0)
            logger.warning("\(request.method) \(request.path) was not sent on to \(upstream): it \(problem)")
            answer(Forwarding.delivered(.error(508, reason: "not sent on to \(upstream): it \(problem)"), from: upstream, as: plan), nil)
            return
        }
        let upstreamCalls: UpstreamClient
        switch upstreamClient.client() {
        case .success(let started):
            upstreamCalls = started
        case .failure(let failure):
            journal.upstreamAnswered(plan.bookkeeping.completionTag, status: 502, milliseconds: 0)
            answer(Forwarding.delivered(.error(502, reason: "requests cannot go to the upstream \(upstream): \(failure.message)"),
                                        from: upstream, as: plan), nil)
            return
        }
        loopGuard.arm()
        let call = Forwarding.call(for: request, upstream: upstream, client: client, scheme: scheme, via: loopGuard.viaEntry)
        let id = plan.bookkeeping.completionTag
        let origin = options.cors == nil ? nil : request.headerValue("Origin")
        upstreamCalls.send(call) { [self] result, report in
            var answered = Forwarding.delivered(Forwarding.plan(for: result, upstream: upstream, head: request.method == "HEAD"),
                                                from: upstream, as: plan)
            // The network profile's latency came with the plan's delay; what it does on the
            // socket (bandwidth, a reset after N bytes, a slow close) goes on the answer too.
            if let network = plan.network { answered.network = network }
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
