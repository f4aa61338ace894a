import MishapEngine

/// Decides the response to a request; the server carries the plan out on the socket.
public protocol Responder: Sendable {
    func respond(to request: Request) -> ResponsePlan
}

extension Engine: Responder {}
