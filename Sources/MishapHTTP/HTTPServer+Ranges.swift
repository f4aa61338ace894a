import CMicroHTTPD
import MishapEngine

extension HTTPServer {
    /// Sends the head (with the `Content-Length` of the whole answer) and `after` bytes of the
    /// body, then breaks the connection (`ranges: { resetAfterBytes: N }` or
    /// `closeAfterBytes`): a download that dies on the way, for the client to resume.
    ///
    /// Sent at once, the body is a `RangeCutBody`, which makes sure the client has the N bytes
    /// before the break. Under a network profile that paces the answer, a reset goes through
    /// `ShapedBody`, which paces the bytes and resets after N of them as the profile's own
    /// `resetAfterBytes` does; a close is not paced. (`dribble` with a cut is refused in files.)
    func carryOutCut(_ plan: ResponsePlan, after: Int, on connection: OpaquePointer) -> MHD_Result {
        let cut = min(max(after, 0), plan.body.count)
        let closes = plan.bookkeeping.range?.cutCloses == true
        let network = plan.network.flatMap { $0.shapesDelivery ? $0 : nil }
        if !closes, let network {
            let shaping = NetworkShaping(
                profile: network.profile, addedLatencyMilliseconds: network.addedLatencyMilliseconds,
                downBytesPerSecond: network.downBytesPerSecond, chunkLatencyMilliseconds: network.chunkLatencyMilliseconds,
                chunkJitterMilliseconds: network.chunkJitterMilliseconds,
                resetAfter: .bytes(min(cut, network.resetAfter?.bytes(of: plan.body.count) ?? cut)))
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
