import CMicroHTTPD
import CMicroHTTPDShim
import MishapEngine
import MishapSupport

// The access handler's part in a network profile's upload faults and rate
// (`Responder.uploadShaping(for:)`): asked once, on the first call of a request whose head
// declares a body; a request without a body, or one the responder leaves alone, pays nothing more.

/// Carries out what a network profile does to the body of `head` before any of it is read:
/// answers at once (`answerEarly`), or keeps the gate the pieces of body go through.
func shapeUpload(_ shaping: UploadShaping, head: Request, server: HTTPServer, connection: OpaquePointer,
                 state: RequestState) -> MHD_Result {
    if case .answerEarly? = shaping.fault, let early = shaping.earlyAnswer {
        // Queued on the first call, as a refusal is (docs/libmicrohttpd.md, "Refusals on the
        // first call"): libmicrohttpd sends it instead of `100 Continue`, reads no body, and
        // closes the connection after it. The responder has noted it already; the head is not
        // kept, so the request is not told as incomplete when it ends.
        if server.isObserved { state.record.note(method: head.method, path: head.path, plan: early) }
        state.completionTag = early.bookkeeping.completionTag
        if early.hang || early.delayMilliseconds > 0 {
            // Held on the first call: libmicrohttpd sends no `100 Continue` meanwhile, and calls
            // the access handler again after the resume, with no body, which carries out the
            // waiting plan as after any delay (then it is queued before the body, as here).
            state.waitingPlan = early
            let held = early.hang
                ? server.suspensions.holdUntilClientLeaves(connection, socket: mishap_connection_fd(connection))
                : server.suspensions.hold(connection, milliseconds: early.delayMilliseconds)
            if held { return .YES }
            state.waitingPlan = nil
            if early.hang { return .NO }
        }
        return server.carryOut(early, on: connection)
    }
    state.head = head
    state.upload = UploadGate(shaping)
    return .YES
}

/// A piece of body through the request's gate: consumes what the gate allows (what is left
/// stays in libmicrohttpd's buffer, `*upload_data_size`), then holds the connection for the
/// rate, stalls it, or resets it.
func admitBody(_ server: HTTPServer, _ connection: OpaquePointer, _ gate: UploadGate, _ state: RequestState,
               _ uploadData: UnsafePointer<CChar>?, _ uploadDataSize: UnsafeMutablePointer<Int>) -> MHD_Result {
    let size = uploadDataSize.pointee
    let (count, then) = gate.step(offered: size)
    if count > 0, !state.bodyTooLarge, let uploadData {
        if state.body.count + count > server.configuration.maxBodyBytes {
            state.bodyTooLarge = true
            state.body = []
        } else {
            uploadData.withMemoryRebound(to: UInt8.self, capacity: count) {
                state.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
            }
        }
    }
    uploadDataSize.pointee = size - count
    switch then {
    case .next:
        return .YES
    case .wait(let milliseconds):
        // Stopping: nothing waits any more, and the request is closed.
        return server.suspensions.hold(connection, milliseconds: milliseconds) ? .YES : .NO
    case .stall:
        return server.suspensions.holdStalledUpload(connection, socket: mishap_connection_fd(connection)) ? .YES : .NO
    case .reset:
        // Linger 0, and MHD_NO: libmicrohttpd closes at once under MHD_USE_TURBO, with a RST
        // (as the `reset` fault does).
        Socket.resetOnClose(mishap_connection_fd(connection))
        return .NO
    }
}
