import CMicroHTTPD
import MishapEngine

extension HTTPServer {
    /// Sends the head (with the `Content-Length` of the whole answer) and `after` bytes of the
    /// body, then breaks the connection (`ranges: { resetAfterBytes: N }` or
    /// `closeAfterBytes`): a download that dies on the way, for the client to resume.
    ///
    /// The body is a `RangeCutBody`, which makes sure the client has the N bytes before the
    /// break. Under a network profile that shapes delivery it is a `ShapedBody` instead: paced
    /// at the profile's bandwidth, and broken at the earlier of the rule's cut and the
    /// profile's `resetAfterBytes` (the rule's on a tie), after the same wait for the client to
    /// take the bytes. `dribble` with a cut is refused in files.
    func carryOutCut(_ plan: ResponsePlan, after: Int, on connection: OpaquePointer) -> MHD_Result {
        let closes = plan.bookkeeping.range?.cutCloses == true
        if let network = plan.network, network.shapesDelivery {
            return carryOutShaped(plan, network, cut: (after, closes), on: connection)
        }
        let body = RangeCutBody(bytes: plan.body, cut: after, closes: closes,
                                connection: connection, suspensions: suspensions)
        let context = Unmanaged.passRetained(body).toOpaque()
        guard let response = MHD_create_response_from_callback(UInt64(plan.body.count), 16 * 1024, readRangeCutBody, context,
                                                               releaseRangeCutBody) else {
            Unmanaged<RangeCutBody>.fromOpaque(context).release()
            return .NO
        }
        addHeaders(plan, to: response)
        return queueOnce(response, status: plan.status, on: connection)
    }
}
