import CMicroHTTPD
import CMicroHTTPDShim
import MishapEngine
import MishapSupport

// The C callbacks libmicrohttpd calls for each request, on its worker threads: the access
// handler, the completed callback and the iterator over headers and query arguments. They are
// free functions because a C function pointer cannot capture context (the server comes back
// as the `cls` pointer given when the daemon started), and they must not be actor-isolated:
// they run on libmicrohttpd's threads, several at once (docs/libmicrohttpd.md,
// "How a request flows through the callbacks" and "Callbacks are not actor-isolated"). What
// each request carries from one call to the next is its context pointer (`RequestContext`).

/// The access handler: called once when headers arrive, then once per piece of body, then a
/// last time with no data, when the response is queued; and again after a suspended
/// connection resumes.
func handleAccess(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?,
    _ version: UnsafePointer<CChar>?,
    _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?,
    _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let url, let method, let uploadDataSize, let requestContext else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let slot = RequestContextSlot(requestContext)
    let context = slot.context
    switch context {
    case .unseen:
        return firstCall(server, connection, url: url, method: method, version: version, slot: slot, pathHasEncodedNul: false)
    case .encodedNul:
        return firstCall(server, connection, url: url, method: method, version: version, slot: slot, pathHasEncodedNul: true)
    case .answered:
        // libmicrohttpd calls no more once a response is queued.
        assertionFailure("the access handler was called for a request already answered")
        return .NO
    case .seen, .state:
        break
    }

    if uploadDataSize.pointee > 0 {
        let state = slot.state()
        if let gate = state.upload {
            return admitBody(server, connection, gate, state, uploadData, uploadDataSize)
        }
        let size = uploadDataSize.pointee
        if !state.bodyTooLarge, let uploadData {
            if state.body.count + size > server.configuration.maxBodyBytes {
                state.bodyTooLarge = true
                state.body = []
            } else {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: size) {
                    state.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size))
                }
            }
        }
        uploadDataSize.pointee = 0
        return .YES
    }
    // The request is complete only at the call without data (a null pointer). libmicrohttpd
    // 0.9.75 also calls with zero bytes of its read buffer while still reading the request:
    // after "100 Continue" for a request without a body when the next request is already in
    // its buffer. Answering then fails (too early to queue), which would close the connection
    // (docs/libmicrohttpd.md, "An empty piece of body is not the end").
    if uploadData != nil { return .YES }

    var body: [UInt8] = []
    /// The head read on the first call, when it declared a body: taken (moved out, so the
    /// completed callback sees the request was asked about).
    var head: Request?
    if case .state(let state) = context {
        swap(&head, &state.head)
        if let forwarded = state.forwarded {
            // Resumed: the upstream answered, or the server stops (the request is closed).
            state.forwarded = nil
            guard !server.suspensions.isStopping, let (taken, heldMemory) = forwarded.take() else { return .NO }
            var answer = taken
            state.heldMemory = heldMemory
            answer.fitResponseHead(room: state.responseHeaderRoom)
            answer.bookkeeping.completionTag = state.completionTag
            if server.isObserved { state.record.note(plan: answer) }
            if answer.delayMilliseconds > 0 {
                // A rule's `delay` on top of the upstream's answer: held again, as any delay.
                state.waitingPlan = answer
                if server.suspensions.hold(connection, milliseconds: answer.delayMilliseconds) { return .YES }
                state.waitingPlan = nil
            }
            return heldMemory == nil ? server.carryOut(answer, on: connection) : server.carryOutUncopied(answer, on: connection)
        }
        if let plan = state.waitingPlan {
            // Resumed: the delay is over, or a hanging request's client left, or the server
            // stops (after its grace period): a request cut short then is closed, not answered early.
            state.waitingPlan = nil
            if plan.hang || server.suspensions.isStopping { return .NO }
            return state.heldMemory == nil ? server.carryOut(plan, on: connection) : server.carryOutUncopied(plan, on: connection)
        }
        if state.bodyTooLarge {
            let plan = ResponsePlan.payloadTooLarge(limit: server.configuration.maxBodyBytes)
            if server.isObserved { state.record.note(method: method, url: url, plan: plan) }
            return server.queue(plan, on: connection)
        }
        body = state.body
    }

    let headers = head?.headers ?? connectionValues(connection, .HEADER_KIND)
    let limit = server.configuration.maxHeaderBytes
    let headerBytes = headers.reduce(0, { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 })
    if headerBytes > limit {
        let plan = ResponsePlan.headersTooLarge(limit: limit)
        if server.isObserved { slot.state().record.note(method: method, url: url, plan: plan) }
        return server.queue(plan, on: connection)
    }
    var request: Request
    if var head {
        head.body = body
        request = head
    } else {
        request = Request(
            method: RequestTarget.method(method),
            path: RequestTarget.path(url),
            query: connectionValues(connection, .GET_ARGUMENT_KIND),
            headers: headers,
            body: body,
            fromLoopback: mishap_connection_is_loopback(connection) != 0
        )
    }
    // The response head is written into the memory the request still holds: a very long
    // target leaves less room for it (docs/libmicrohttpd.md, "The request and the response
    // head share the connection's memory").
    let fields = headers.count + request.query.count
    if !server.configuration.surelyLeavesResponseRoom(targetBytes: request.path.utf8.count, headerBytes: headerBytes, fields: fields) {
        request.responseHeaderRoom = server.configuration.responseHeaderRoom(
            headBytes: mishap_connection_head_size(connection), fields: fields)
    }
    // A head over the limit would not fit the connection's memory: answered 500 instead.
    var plan = server.responder.respond(to: request)
    plan.fitResponseHead(room: request.responseHeaderRoom)
    if server.isObserved {
        slot.state().record.note(method: request.method, path: request.path, plan: plan)
    }
    if !plan.destination.isHere {
        return forward(request, plan: plan, server: server, connection: connection, state: slot.state())
    }
    if plan.hang || plan.delayMilliseconds > 0 {
        let state = slot.state()
        state.waitingPlan = plan
        state.completionTag = plan.bookkeeping.completionTag
        let held = plan.hang
            ? server.suspensions.holdUntilClientLeaves(connection, socket: mishap_connection_fd(connection))
            : server.suspensions.hold(connection, milliseconds: plan.delayMilliseconds)
        if held { return .YES }
        // The server is stopping: nothing waits any more.
        state.waitingPlan = nil
        if plan.hang { return .NO }
    }
    if plan.bookkeeping.completionTag != 0 {
        // Answered now, so no later call of this request reads the context as a state.
        slot.answered(tag: plan.bookkeeping.completionTag)
    }
    return server.carryOut(plan, on: connection)
}

/// The access handler's first call for a request, when its head has arrived. Answering now
/// makes libmicrohttpd drop keep-alive: the request is only marked seen
/// (docs/libmicrohttpd.md, "First-call answers lose keep-alive"), unless the head must be
/// refused, and the connection closed, before any body is read ("Refusals on the first call"),
/// or a network profile answers it before its body (`shapeUpload`).
private func firstCall(_ server: HTTPServer, _ connection: OpaquePointer, url: UnsafePointer<CChar>,
                       method: UnsafePointer<CChar>, version: UnsafePointer<CChar>?, slot: RequestContextSlot,
                       pathHasEncodedNul: Bool) -> MHD_Result {
    server.requestStarted()
    if server.headDeadline != nil { HeadDeadline.advance(connection) }
    if server.isObserved {
        slot.state().started = MonotonicClock.nanoseconds()
    } else {
        slot.markSeen()
    }
    let framing = mishap_count_framing_headers(connection)
    guard let refusal = RequestHeadChecks.refusal(on: connection, version: version, pathHasEncodedNul: pathHasEncodedNul,
                                                  counts: framing, maxBodyBytes: server.configuration.maxBodyBytes) else {
        // A head that declares a body is read now, while its pointers are valid: if the
        // body never comes whole, what arrived is still told (`handleCompleted`). The last
        // call takes it instead of reading the head again, so this costs nothing more.
        if framing.content_length > 0 || framing.transfer_encoding > 0 {
            let state = slot.state()
            if state.started == 0 { state.started = MonotonicClock.nanoseconds() }
            let head = Request(method: RequestTarget.method(method), path: RequestTarget.path(url),
                               query: connectionValues(connection, .GET_ARGUMENT_KIND),
                               headers: connectionValues(connection, .HEADER_KIND),
                               fromLoopback: mishap_connection_is_loopback(connection) != 0)
            if let shaping = server.responder.uploadShaping(for: head) {
                return shapeUpload(shaping, head: head, server: server, connection: connection, state: state)
            }
            state.head = head
        }
        return .YES
    }
    if server.isObserved {
        let state = slot.state()
        state.record.note(method: method, url: url, plan: refusal)
        if pathHasEncodedNul { state.record.path += "%00" }
    }
    return server.queue(refusal, on: connection)
}

/// Holds the connection while the responder sends the request on to its upstream; the answer
/// resumes it (or the server stopping does, and the request is closed).
private func forward(_ request: Request, plan: ResponsePlan, server: HTTPServer, connection: OpaquePointer,
                     state: RequestState) -> MHD_Result {
    let answer = ForwardedAnswer()
    state.forwarded = answer
    state.completionTag = plan.bookkeeping.completionTag
    state.responseHeaderRoom = request.responseHeaderRoom
    guard let key = server.suspensions.holdForAnswer(connection) else {
        state.forwarded = nil
        return .NO
    }
    let suspensions = server.suspensions
    let scheme = server.configuration.tls == nil ? "http" : "https"
    server.responder.forward(request, plan: plan, client: clientAddress(connection), scheme: scheme) { plan, heldMemory in
        answer.set(plan, heldMemory: heldMemory)
        suspensions.release(key)
    }
    return .YES
}

/// The client's address as text (`127.0.0.1`, `::1`), or `unknown`.
private func clientAddress(_ connection: OpaquePointer) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    guard mishap_connection_client_address(connection, &buffer, buffer.count) == 0 else { return "unknown" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Called when a request ends, answered or not: releases its state.
func handleCompleted(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ reason: MHD_RequestTerminationCode
) {
    guard let cls, let requestContext else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let context = RequestContextSlot(requestContext).take()
    switch context {
    case .unseen, .encodedNul:
        // Never reached the access handler (for a path with `%00`: libmicrohttpd refused its
        // headers itself, or the client left): it was never counted in.
        return
    case .seen, .answered, .state:
        break
    }
    if server.headDeadline != nil, let connection { HeadDeadline.advance(connection) }
    let completedNormally = reason == .REQUEST_TERMINATED_COMPLETED_OK
    if case .answered(let tag) = context {
        server.observer?.finished(tag: tag, completedNormally: completedNormally)
    } else if case .state(let state) = context {
        if var head = state.head {
            // Its head came and its body never came whole: no rule was asked, nothing answered.
            head.body = state.bodyTooLarge ? [] : state.body
            var record = CompletedRequest()
            record.method = head.method
            record.path = head.path
            record.durationNanoseconds = MonotonicClock.nanoseconds() - state.started
            record.completedNormally = false
            record.bodyIncomplete = true
            server.observer?.incomplete(head, record: record)
        } else if server.isObserved, let observer = server.observer {
            // Moved out of the state (released just after): passing the state's own would copy it.
            var request = CompletedRequest()
            swap(&request, &state.record)
            if !completedNormally { request.status = nil }
            request.durationNanoseconds = MonotonicClock.nanoseconds() - state.started
            request.completedNormally = completedNormally
            request.completionTag = state.completionTag
            observer.completed(request)
        } else if state.completionTag != 0 {
            server.observer?.finished(tag: state.completionTag, completedNormally: completedNormally)
        }
    }
    server.requestEnded()
}

/// Every value of one kind (query arguments or headers), in the order received. Lengths come
/// from libmicrohttpd, so a decoded `%00` does not cut a value short.
func connectionValues(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [Field] {
    // Counted first (a walk of libmicrohttpd's list, no callback), so the array is allocated
    // once: appended one by one, it grew two or three times per request.
    let count = MHD_get_connection_values_n(connection, kind, nil, nil)
    guard count > 0 else { return [] }
    var fields: [Field] = []
    fields.reserveCapacity(Int(count))
    withUnsafeMutablePointer(to: &fields) { pointer in
        _ = MHD_get_connection_values_n(connection, kind, collectValue, pointer)
    }
    return fields
}

private func collectValue(
    _ cls: UnsafeMutableRawPointer?,
    _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?,
    _ keySize: Int,
    _ value: UnsafePointer<CChar>?,
    _ valueSize: Int
) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let fields = cls.assumingMemoryBound(to: [Field].self)
    fields.pointee.append(Field(decodeUTF8(key, keySize), value.map { decodeUTF8($0, valueSize) } ?? ""))
    return .YES
}

/// Text from bytes libmicrohttpd owns; invalid UTF-8 becomes U+FFFD.
private func decodeUTF8(_ pointer: UnsafePointer<CChar>, _ count: Int) -> String {
    pointer.withMemoryRebound(to: UInt8.self, capacity: count) {
        String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
    }
}
