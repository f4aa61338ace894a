import MishapEngine

/// Decides the response to a request; the server carries the plan out on the socket.
public protocol Responder: Sendable {
    func respond(to request: Request) -> ResponsePlan

    /// Sends `request`, whose plan names an upstream (`ResponsePlan.upstream`), on to it, and
    /// calls `answer` exactly once, from any thread, with the plan to carry out instead.
    /// `client` is the client's address, `scheme` how it reached this server (`http`, `https`).
    func forward(_ request: Request, plan: ResponsePlan, client: String, scheme: String,
                 answer: @escaping @Sendable (ResponsePlan) -> Void)
}

extension Responder {
    /// A responder that never names an upstream need not forward: this answers 502.
    public func forward(_ request: Request, plan: ResponsePlan, client: String, scheme: String,
                        answer: @escaping @Sendable (ResponsePlan) -> Void) {
        answer(.error(502, reason: "this server has no upstream to send the request on to"))
    }
}

extension Engine: Responder {}
