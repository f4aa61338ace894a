import MishapEngine
import MishapSupport

/// Decides the response to a request; the server carries the plan out on the socket.
public protocol Responder: Sendable {
    func respond(to request: Request) -> ResponsePlan

    /// Sends `request`, whose plan names an upstream (`ResponsePlan.destination`), on to it, and
    /// calls `answer` exactly once, from any thread, with the plan to carry out instead and the
    /// memory budget's share its body holds (nil: none), which the server keeps until the
    /// request ends, and then sends the body from the plan's own storage, uncopied
    /// (`HTTPServer.carryOutUncopied`).
    /// `client` is the client's address, `scheme` how it reached this server (`http`, `https`).
    func forward(_ request: Request, plan: ResponsePlan, client: String, scheme: String,
                 answer: @escaping @Sendable (ResponsePlan, MemoryLease?) -> Void)

    /// What happens to the body of `head` (a request that declares one) on its way in: asked
    /// once its head arrives, before any body is read. Nil: read as it comes.
    func uploadShaping(for head: Request) -> UploadShaping?
}

extension Responder {
    /// A responder that never names an upstream need not forward: this answers 502.
    public func forward(_ request: Request, plan: ResponsePlan, client: String, scheme: String,
                        answer: @escaping @Sendable (ResponsePlan, MemoryLease?) -> Void) {
        answer(.error(502, reason: "this server has no upstream to send the request on to"), nil)
    }

    /// A responder without network profiles reads every body as it comes.
    public func uploadShaping(for head: Request) -> UploadShaping? { nil }
}

extension Engine: Responder {}
