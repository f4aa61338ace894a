import CMicroHTTPD
import CMicroHTTPDShim
import MishapEngine
import MishapSupport

extension HTTPServer {
    /// Sends a stream of Server-Sent Events as a chunked body (`EventStreamBody`), with
    /// `Content-Type: text/event-stream` and `Cache-Control: no-cache` unless the rule declares
    /// its own. A network profile's latency is already in the plan's delay, and its reset
    /// before any byte (loss, offline) is carried out here; its bandwidth, per-chunk latency,
    /// reset after some bytes and slow close by the stream (`EventStreamBody`; docs/streams.md).
    func carryOutEvents(_ events: EventStreamPlan, _ plan: ResponsePlan, on connection: OpaquePointer) -> MHD_Result {
        if let fault = plan.fault {
            // A network profile's loss or offline window: the request gets no byte.
            if fault == .reset { Socket.resetOnClose(mishap_connection_fd(connection)) }
            return .NO
        }
        var plan = plan
        if !plan.headers.contains(where: { $0.name.equalsIgnoringASCIICase("content-type") }) {
            plan.headers.insert(Field("Content-Type", "text/event-stream; charset=utf-8"), at: 0)
        }
        if !plan.headers.contains(where: { $0.name.equalsIgnoringASCIICase("cache-control") }) {
            plan.headers.append(Field("Cache-Control", "no-cache"))
        }
        if let network = plan.network, network.slowCloseMilliseconds > 0, network.resetAfter == nil,
           !plan.headers.contains(where: { $0.name.equalsIgnoringASCIICase("connection") }) {
            // A slow close ends with the connection's close, as for any other answer.
            plan.headers.append(Field("Connection", "close"))
        }
        var progress = EventStreamProgress()
        if plan.bookkeeping.completionTag != 0, let observer {
            let tag = plan.bookkeeping.completionTag
            progress = EventStreamProgress(whenReleased: { snapshot in observer.eventStreamEnded(tag: tag, snapshot) },
                                           whenSent: { snapshot in observer.eventStreamSent(tag: tag, snapshot) })
        }
        let body = EventStreamBody(plan: events, network: plan.network, connection: connection, suspensions: suspensions, progress: progress)
        let context = Unmanaged.passRetained(body).toOpaque()
        // Unknown size: the body is chunked, each event written as it goes.
        guard let response = MHD_create_response_from_callback(UInt64.max, 16 * 1024, readEventStream, context,
                                                               releaseEventStream) else {
            Unmanaged<EventStreamBody>.fromOpaque(context).release()
            return .NO
        }
        addHeaders(plan, to: response)
        return queueOnce(response, status: plan.status, on: connection)
    }
}
