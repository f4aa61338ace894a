import CMicroHTTPD
import MishapEngine

extension HTTPServer {
    /// Sends the head (with the `Content-Length` of the whole answer) and `after` bytes of the
    /// body, then breaks the connection (`ranges: { resetAfterBytes: N }` or
    /// `closeAfterBytes`): a download that dies on the way, for the client to resume.
    ///
    /// Sent at once, the body is a `RangeCutBody`, which makes sure the client has the N bytes
    /// before a reset. Paced (a dribble, or a network profile's rate), a reset goes through
    /// `ShapedBody`, which resets after N bytes on the way: the client keeps up with a pace, so
    /// little is left in the socket when the reset comes. A close is not paced by a network
    /// profile's rate (`closeAfterBytes` with `dribble` is refused in files).
    func carryOutCut(_ plan: ResponsePlan, after: Int, on connection: OpaquePointer) -> MHD_Result {
        let cut = min(max(after, 0), plan.body.count)
        let closes = plan.bookkeeping.range?.cutCloses == true
        let network = plan.network.flatMap { $0.shapesDelivery ? $0 : nil }
        if !closes, plan.dribble != nil || network != nil {
            let shaping = NetworkShaping(
                profile: network?.profile ?? "ranges", addedLatencyMilliseconds: network?.addedLatencyMilliseconds ?? 0,
                downBytesPerSecond: network?.downBytesPerSecond, chunkLatencyMilliseconds: network?.chunkLatencyMilliseconds ?? 0,
                chunkJitterMilliseconds: network?.chunkJitterMilliseconds ?? 0,
                resetAfter: .bytes(min(cut, network?.resetAfter?.bytes(of: plan.body.count) ?? cut)))
            return carryOutShaped(plan, shaping, on: connection)
        }
        let body = RangeCutBody(bytes: plan.body, cut: cut, closes: closes, connection: connection, suspensions: suspensions)
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
