import CMicroHTTPD
import MishapEngine

extension HTTPServer {
    /// Sends the head (with the `Content-Length` of the whole answer) and `after` bytes of the
    /// body, then breaks the connection (`ranges: { resetAfterBytes: N }` or
    /// `closeAfterBytes`): a download that dies on the way, for the client to resume.
    ///
    /// The body is a `RangeCutBody`, which makes sure the client has the N bytes before the
    /// break. It is sent at once, also under a network profile with a bandwidth (whose latency
    /// still comes first, in the plan's delay): through `ShapedBody`, which paces and resets, a
    /// session at 100 kB/s got 10,000 of 40,000 bytes before the reset. `dribble` with a cut is
    /// refused in files.
    func carryOutCut(_ plan: ResponsePlan, after: Int, on connection: OpaquePointer) -> MHD_Result {
        let body = RangeCutBody(bytes: plan.body, cut: after, closes: plan.bookkeeping.range?.cutCloses == true,
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
