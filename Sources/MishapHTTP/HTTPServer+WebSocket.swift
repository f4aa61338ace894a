import CMicroHTTPD
import CMicroHTTPDShim
import MishapEngine
import MishapSupport

extension HTTPServer {
    /// Upgrades the connection to WebSocket and hands it to the WebSocket loop, which plays the
    /// script; or refuses the upgrade: the script's `refuse`, an HTTPS port (501), too many open
    /// sockets (503), a request that is not a WebSocket handshake (426, or 400 when it is a
    /// broken one).
    /// A network profile's loss or offline window resets the connection before the 101; its
    /// latency is the plan's delay, and the rest shapes the socket's frames (`WebSocketShaper`).
    func carryOutWebSocket(_ script: WebSocketScript, _ plan: ResponsePlan, on connection: OpaquePointer) -> MHD_Result {
        if let fault = plan.fault {
            // A network profile's loss or offline window (the only fault a socket's plan
            // carries): no byte, a RST.
            if fault == .reset { Socket.resetOnClose(mishap_connection_fd(connection)) }
            return .NO
        }
        if let status = script.refuse {
            return queue(.error(status, reason: "WebSocket upgrade refused by the scenario (refuse: \(status))"), on: connection)
        }
        if configuration.tls != nil {
            // libmicrohttpd 0.9.75 forwards an upgraded TLS connection through a small buffer on
            // its own threads; Mishap does not carry WebSocket over it (docs/websocket.md).
            return queue(.error(501, reason: "WebSocket over HTTPS (wss://) is not supported: use ws:// on the HTTP port"),
                         on: connection)
        }
        let header = { (name: String) -> String? in
            name.withCString { MHD_lookup_connection_value(connection, .HEADER_KIND, $0) }.map { String(cString: $0) }
        }
        guard Self.hasToken("websocket", in: header("Upgrade")), Self.hasToken("upgrade", in: header("Connection")) else {
            return queue(.error(426, reason: "This endpoint answers with WebSocket: send a WebSocket handshake (Upgrade: websocket, Connection: Upgrade)",
                                headers: [Field("Upgrade", "websocket"), Field("Sec-WebSocket-Version", "13")]), on: connection)
        }
        guard header("Sec-WebSocket-Version").map({ String($0.trimmingASCIIWhitespace()) }) == "13" else {
            return queue(.error(426, reason: "Only WebSocket version 13 (RFC 6455) is spoken: send Sec-WebSocket-Version: 13",
                                headers: [Field("Sec-WebSocket-Version", "13")]), on: connection)
        }
        guard let key = header("Sec-WebSocket-Key").map({ String($0.trimmingASCIIWhitespace()) }), Base64.decode(key)?.count == 16,
              let accept = WebSocketFrames.accept(key: key) else {
            return queue(.error(400, reason: "A WebSocket handshake needs Sec-WebSocket-Key: 16 random bytes in base64"), on: connection)
        }
        let limit = webSockets.connectionLimit.load(ordering: .relaxed)
        let reporter = plan.bookkeeping.completionTag != 0 ? observer.map { WebSocketReporter(tag: plan.bookkeeping.completionTag, observer: $0) } : nil
        guard webSockets.expect(script, reporter: reporter, network: plan.network, for: connection, limit: limit) else {
            return queue(.error(503, reason: "Too many WebSocket connections open (at most \(limit))",
                                headers: [Field("Retry-After", "1")]), on: connection)
        }
        guard let response = MHD_create_response_for_upgrade(handleUpgrade, Unmanaged.passUnretained(webSockets).toOpaque()) else {
            webSockets.forget(connection)
            return .NO
        }
        // libmicrohttpd adds `Connection: Upgrade` itself; the rule's own headers go along.
        var answer = plan
        answer.headers.removeAll { $0.name.equalsIgnoringASCIICase("content-type") }
        answer.headers.append(Field("Upgrade", "websocket"))
        answer.headers.append(Field("Sec-WebSocket-Accept", accept))
        addHeaders(answer, to: response)
        guard queueOnce(response, status: 101, on: connection) == .YES else {
            // libmicrohttpd refuses to upgrade an HTTP/1.0 request (and queues nothing): that
            // gets an answer saying why, not a closed connection.
            webSockets.forget(connection)
            return queue(.error(400, reason: "A WebSocket handshake needs HTTP/1.1"), on: connection)
        }
        return .YES
    }

    /// Whether a comma-separated header holds `token` (without regard to case).
    static func hasToken(_ token: String, in value: String?) -> Bool {
        guard let value else { return false }
        return value.split(separator: ",").contains { String($0.trimmingASCIIWhitespace()).equalsIgnoringASCIICase(token) }
    }
}

/// libmicrohttpd's upgrade handler, on a worker thread once the 101 is sent: the socket goes to
/// the WebSocket loop at once (the handler must not block).
private func handleUpgrade(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ requestContext: UnsafeMutableRawPointer?,
                           _ extra: UnsafePointer<CChar>?, _ extraSize: Int, _ socket: Int32, _ handle: OpaquePointer?) {
    guard let cls, let connection, let handle else { return }
    let loop = Unmanaged<WebSocketLoop>.fromOpaque(cls).takeUnretainedValue()
    var bytes: [UInt8] = []
    if let extra, extraSize > 0 {
        extra.withMemoryRebound(to: UInt8.self, capacity: extraSize) { bytes = Array(UnsafeBufferPointer(start: $0, count: extraSize)) }
    }
    loop.adopt(connection: connection, socket: socket, handle: handle, extra: bytes)
}
