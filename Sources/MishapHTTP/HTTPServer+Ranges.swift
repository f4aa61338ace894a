import CMicroHTTPD
import MishapEngine

extension HTTPServer {
    /// Sends the head and `after` bytes of the body, then breaks the connection (a resumable
    /// download's fault). Placeholder until ranges are written.
    func carryOutCut(_ plan: ResponsePlan, after: Int, on connection: OpaquePointer) -> MHD_Result {
        .NO
    }
}
