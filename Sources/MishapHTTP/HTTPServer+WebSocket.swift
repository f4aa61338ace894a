import CMicroHTTPD
import MishapEngine

extension HTTPServer {
    /// Upgrades the connection to WebSocket and plays the script. Placeholder until the
    /// script is written.
    func carryOutWebSocket(_ script: WebSocketScript, _ plan: ResponsePlan, on connection: OpaquePointer) -> MHD_Result {
        .NO
    }
}
