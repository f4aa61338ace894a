extension ResponsePlan {
    /// Where the answer to a request comes from. The engine names the server's upstream without
    /// knowing its URL (only the service does); the HTTP server holds the connection of a plan
    /// sent elsewhere and asks its responder to `forward` the request, then carries out the plan
    /// that comes back, built from the upstream's answer and this plan's delivery (`headers`,
    /// `delayMilliseconds`, `dribble`, `fault`).
    public enum Destination: Sendable, Equatable {
        /// The plan is the answer.
        case here
        /// The upstream server Mishap was started with (`--upstream`): a rule's
        /// `proxy: upstream`, or a request no rule answers.
        case serverUpstream
        /// A base URL of a rule's own (`proxy: http://127.0.0.1:9000`).
        case url(String)

        /// Whether the plan is the answer (no upstream is asked).
        public var isHere: Bool {
            if case .here = self { return true }
            return false
        }
    }

    /// A plan that sends the request on to `destination` and puts nothing of its own on its
    /// answer: no headers, delay, dribble or fault, and no status (the upstream's answer brings
    /// one). What a request no rule answers gets when there is an upstream.
    public static func passedOn(to destination: Destination) -> ResponsePlan {
        ResponsePlan(status: 0, destination: destination)
    }
}
