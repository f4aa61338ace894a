import CMicroHTTPD
import CMicroHTTPDShim
import Logging
import MishapEngine
import MishapSupport

extension HTTPServer {
    /// Carries out a plan whose wait, if any, is over: sends the response, or breaks the
    /// connection as its fault says. A plan with a warning (a rule's headers over the limit,
    /// answered 500 instead) is logged first.
    func carryOut(_ plan: ResponsePlan, on connection: OpaquePointer) -> MHD_Result {
        if let warning = plan.bookkeeping.warning {
            var metadata: Logger.Metadata = [:]
            if let endpoint = plan.bookkeeping.endpoint { metadata["endpoint"] = .string(endpoint) }
            if let rule = plan.bookkeeping.rule { metadata["rule"] = .string(rule) }
            logger.warning("\(warning)", metadata: metadata)
        }
        if let stream = plan.stream {
            switch stream {
            case .events(let events): return carryOutEvents(events, plan, on: connection)
            case .webSocket(let script): return carryOutWebSocket(script, plan, on: connection)
            }
        }
        if let fault = plan.fault {
            return breakConnection(fault, plan, connection)
        }
        if let cut = plan.cutAfterBytes {
            return carryOutCut(plan, after: cut, on: connection)
        }
        if let network = plan.network, network.shapesDelivery {
            return carryOutShaped(plan, network, on: connection)
        }
        if let dribble = plan.dribble {
            return queueStreamed(plan, .dribble(dribble), size: UInt64(plan.body.count), on: connection)
        }
        if plan.body.isEmpty, let length = plan.declaredLength {
            // An upstream's answer to HEAD: its length declared, no body (libmicrohttpd sends
            // none for HEAD, and writes the size given here as Content-Length).
            var head = plan
            head.headers.removeAll { $0.name.equalsIgnoringASCIICase("content-length") }
            return queueStreamed(head, .whole, size: length, on: connection)
        }
        return queue(plan, on: connection)
    }

    /// `carryOut` for an upstream's answer, whose body is budgeted memory (held until the
    /// request ends): the body is sent from the plan's own storage, not copied. Kept apart from
    /// `carryOut`, whose every other answer should not pay for the choice.
    @inline(never)
    func carryOutUncopied(_ plan: ResponsePlan, on connection: OpaquePointer) -> MHD_Result {
        guard plan.bookkeeping.warning == nil, plan.stream == nil, plan.cutAfterBytes == nil, plan.fault == nil, plan.dribble == nil, plan.network == nil, !plan.body.isEmpty else {
            // (A shaped answer's body is not copied either: `ShapedBody` holds the plan's own.)
            return carryOut(plan, on: connection)
        }
        return queueStreamed(plan, .whole, size: UInt64(plan.body.count), on: connection)
    }

    private func breakConnection(_ fault: Fault, _ plan: ResponsePlan, _ connection: OpaquePointer) -> MHD_Result {
        let socket = mishap_connection_fd(connection)
        switch fault {
        case .close:
            // Refusing the request closes the connection before any response byte.
            return .NO
        case .reset:
            // Linger 0 turns the close into a RST; MHD_USE_TURBO keeps libmicrohttpd from
            // sending a FIN first.
            Socket.resetOnClose(socket)
            return .NO
        case .garbage:
            // The socket is non-blocking: a short write is fine, the bytes are garbage anyway.
            Socket.sendOnce(socket, plan.body)
            return .NO
        case .truncate:
            let declared = max(plan.body.count, 1)
            return queueStreamed(plan, .truncate(plan.body.count / 2), size: UInt64(declared), on: connection)
        case .truncateChunked:
            // Unknown size makes the body chunked; stopping with an error leaves out the last chunk.
            return queueStreamed(plan, .truncate(plan.body.count / 2), size: UInt64.max, on: connection)
        case .contentLengthMismatch:
            var lying = plan
            lying.headers.append(Field("Content-Length", String(plan.body.count / 2)))
            return queueStreamed(lying, .whole, size: UInt64.max, on: connection,
                                 flags: [.RF_HTTP_1_0_COMPATIBLE_STRICT, .RF_INSANITY_HEADER_CONTENT_LENGTH])
        }
    }

    func queueStreamed(_ plan: ResponsePlan, _ mode: StreamedBody.Mode, size: UInt64, on connection: OpaquePointer,
                               flags: MHD_ResponseFlags? = nil) -> MHD_Result {
        let body = StreamedBody(bytes: plan.body, mode: mode, connection: connection,
                                socket: mishap_connection_fd(connection), suspensions: suspensions)
        let context = Unmanaged.passRetained(body).toOpaque()
        guard let response = MHD_create_response_from_callback(size, 16 * 1024, readStreamedBody, context, releaseStreamedBody) else {
            Unmanaged<StreamedBody>.fromOpaque(context).release()
            return .NO
        }
        if let flags { _ = mishap_response_set_flags(response, flags) }
        addHeaders(plan, to: response)
        return queueOnce(response, status: plan.status, on: connection)
    }

    /// Queues a plan with its whole body in memory.
    func queue(_ plan: ResponsePlan, on connection: OpaquePointer) -> MHD_Result {
        if let prepared = plan.prepared {
            // Built once and shared by every request it answers: libmicrohttpd reference-counts
            // responses under a lock, and nothing is added to it after it is built.
            let form = prepared.serverForm(make: { UInt(bitPattern: Int(bitPattern: build(prepared.plan))) },
                                           release: { MHD_destroy_response(OpaquePointer(bitPattern: $0)) })
            if let response = OpaquePointer(bitPattern: form) {
                return MHD_queue_response(connection, UInt32(plan.status), response)
            }
        }
        guard let response = build(plan) else { return .NO }
        return queueOnce(response, status: plan.status, on: connection)
    }

    /// A libmicrohttpd response holding a copy of the plan's body and its headers.
    private func build(_ plan: ResponsePlan) -> OpaquePointer? {
        let response = plan.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let response else { return nil }
        addHeaders(plan, to: response)
        return response
    }

    func addHeaders(_ plan: ResponsePlan, to response: OpaquePointer) {
        for header in plan.headers {
            // withCString: a small string (most header names) is copied onto the stack; passed
            // as an implicit pointer argument, it was copied into a new array on the heap.
            _ = header.name.withCString { name in
                header.value.withCString { value in MHD_add_response_header(response, name, value) }
            }
        }
    }

    /// Queues a response used for this request only, and lets go of it.
    func queueOnce(_ response: OpaquePointer, status: Int, on connection: OpaquePointer) -> MHD_Result {
        let result = MHD_queue_response(connection, UInt32(status), response)
        MHD_destroy_response(response)
        return result
    }
}

extension ResponsePlan {
    /// The `Content-Length` among the headers, which only an upstream's answer to `HEAD` has
    /// (scenario files cannot declare one): the length of the body a `GET` would get.
    var declaredLength: UInt64? {
        headers.last { $0.name.equalsIgnoringASCIICase("content-length") }.flatMap { UInt64($0.value) }
    }

    static func payloadTooLarge(limit: Int) -> ResponsePlan {
        .error(413, reason: "Request body larger than \(limit) bytes")
    }

    static func headersTooLarge(limit: Int) -> ResponsePlan {
        .error(431, reason: "Request headers larger than \(limit) bytes")
    }
}
