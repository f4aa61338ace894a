import CMicroHTTPD
import MishapEngine

extension HTTPServer {
    /// Sends a stream of Server-Sent Events. Placeholder until the events are written.
    func carryOutEvents(_ events: EventStreamPlan, _ plan: ResponsePlan, on connection: OpaquePointer) -> MHD_Result {
        .NO
    }
}
