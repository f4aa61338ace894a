import MishapEngine
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

    /// The plan that sends a request on to `upstream`, carried out when its answer comes.
    static func forwardPlan(_ upstream: UpstreamOptions) -> ResponsePlan {
        var plan = ResponsePlan(status: 502)
        plan.upstream = upstream.url
        return plan
    }

    public func forward(_ request: Request, plan: ResponsePlan, client: String, scheme: String,
                        answer: @escaping @Sendable (ResponsePlan) -> Void) {
        guard let upstream = plan.upstream, let upstreamClient else {
            answer(.error(502, reason: "libcurl could not start, so requests no rule answers cannot go to the upstream"))
            return
        }
        let call = Forwarding.call(for: request, upstream: upstream, client: client, scheme: scheme)
        let id = plan.completionTag
        let origin = options.cors == nil ? nil : request.headerValue("Origin")
        upstreamClient.send(call) { [self] result in
            var answered = Forwarding.plan(for: result, upstream: upstream)
            switch result {
            case .answered(let status, _, _, let milliseconds):
                journal.upstreamAnswered(id, status: status, milliseconds: milliseconds)
            case .failed(let failure, let milliseconds):
                journal.upstreamAnswered(id, status: answered.status, milliseconds: milliseconds)
                if failure.kind != .cancelled {
                    logger.warning("upstream \(upstream) gave no answer to \(request.method) \(request.path) (\(failure.kind.rawValue)): \(failure.message); answered \(answered.status)")
                }
            }
            if let cors = options.cors, let origin { answered = cors.decorate(answered, origin: origin) }
            answer(answered)
        }
    }

    /// Cancels the requests still waiting for the upstream and ends its client's thread.
    public func stopUpstream() {
        upstreamClient?.stop()
    }
}
