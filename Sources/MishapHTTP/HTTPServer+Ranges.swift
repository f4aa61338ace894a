import CMicroHTTPD
import MishapEngine

extension HTTPServer {
    /// Sends the head (with the `Content-Length` of the whole answer) and `after` bytes of the
    /// body, then breaks the connection (`ranges: { resetAfterBytes: N }` or
    /// `closeAfterBytes`): a download that dies on the way, for the client to resume.
    ///
    /// A reset goes through `ShapedBody`, which already resets after N bytes (linger 0, so a
    /// RST rather than a FIN) and paces the bytes at a network profile's rate or a dribble's
    /// schedule on the way. A close is the `truncate` fault's: the bytes, then
    /// `shutdown(SHUT_RDWR)`, a FIN; it is sent at once (`closeAfterBytes` with `dribble` is
    /// refused in files, and a network profile's rate does not pace it).
    func carryOutCut(_ plan: ResponsePlan, after: Int, on connection: OpaquePointer) -> MHD_Result {
        let cut = min(max(after, 0), plan.body.count)
        if plan.bookkeeping.range?.cutCloses == true {
            return queueStreamed(plan, .truncate(cut), size: UInt64(plan.body.count), on: connection)
        }
        let network = plan.network
        let shaping = NetworkShaping(
            profile: network?.profile ?? "ranges", addedLatencyMilliseconds: network?.addedLatencyMilliseconds ?? 0,
            downBytesPerSecond: network?.downBytesPerSecond, chunkLatencyMilliseconds: network?.chunkLatencyMilliseconds ?? 0,
            chunkJitterMilliseconds: network?.chunkJitterMilliseconds ?? 0,
            resetAfter: .bytes(min(cut, network?.resetAfter?.bytes(of: plan.body.count) ?? cut)))
        return carryOutShaped(plan, shaping, on: connection)
    }
}
