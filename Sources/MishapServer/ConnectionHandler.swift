import CMicroHTTPD
import MishapEngine

// The C callbacks libmicrohttpd calls on its worker threads. They live outside `main.swift` so
// they do not inherit `@MainActor` (libmicrohttpd.md, trap 3).

/// What a request collects between the calls libmicrohttpd makes for it.
final class RequestState {
    var body: [UInt8] = []
    var bodyTooLarge = false
}

/// Marks a request seen once that has no state object (yet): a request without a body never
/// allocates one.
nonisolated(unsafe) private let firstCallMarker = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)

/// The access handler: called once when headers arrive, then once per piece of body, then a
/// last time with no data, when the response is queued.
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

    // Answering on the first call makes libmicrohttpd drop keep-alive (trap 1): only mark it.
    guard let stored = requestContext.pointee else {
        requestContext.pointee = firstCallMarker
        return .YES
    }

    if uploadDataSize.pointee > 0 {
        let state: RequestState
        if stored == firstCallMarker {
            state = RequestState()
            requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
        } else {
            state = Unmanaged<RequestState>.fromOpaque(stored).takeUnretainedValue()
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

    var body: [UInt8] = []
    if stored != firstCallMarker {
        let state = Unmanaged<RequestState>.fromOpaque(stored).takeUnretainedValue()
        if state.bodyTooLarge {
            return queue(ResponsePlan.payloadTooLarge(limit: server.configuration.maxBodyBytes), on: connection)
        }
        body = state.body
    }

    let request = Request(
        method: String(cString: method),
        path: String(cString: url),
        query: connectionValues(connection, .GET_ARGUMENT_KIND),
        headers: connectionValues(connection, .HEADER_KIND),
        body: body
    )
    return queue(server.responder.respond(to: request), on: connection)
}

/// Called when a request ends, answered or not: releases its state.
func handleCompleted(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ reason: MHD_RequestTerminationCode
) {
    guard let requestContext, let stored = requestContext.pointee else { return }
    requestContext.pointee = nil
    if stored != firstCallMarker {
        Unmanaged<RequestState>.fromOpaque(stored).release()
    }
}

/// Every value of one kind (query arguments or headers), in the order received.
private func connectionValues(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [Field] {
    var fields: [Field] = []
    withUnsafeMutablePointer(to: &fields) { pointer in
        _ = MHD_get_connection_values(connection, kind, collectValue, pointer)
    }
    return fields
}

private func collectValue(
    _ cls: UnsafeMutableRawPointer?,
    _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?,
    _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let fields = cls.assumingMemoryBound(to: [Field].self)
    fields.pointee.append(Field(String(cString: key), value.map { String(cString: $0) } ?? ""))
    return .YES
}

/// Builds the libmicrohttpd response for a plan and queues it.
private func queue(_ plan: ResponsePlan, on connection: OpaquePointer) -> MHD_Result {
    let response = plan.body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let response else { return .NO }
    for header in plan.headers {
        _ = MHD_add_response_header(response, header.name, header.value)
    }
    let result = MHD_queue_response(connection, UInt32(plan.status), response)
    MHD_destroy_response(response)
    return result
}

extension ResponsePlan {
    static func payloadTooLarge(limit: Int) -> ResponsePlan {
        var body = Array(#"{"error":true,"reason":"Request body larger than "#.utf8)
        body += Array("\(limit) bytes\"}".utf8)
        return ResponsePlan(status: 413, headers: [Field("Content-Type", "application/json; charset=utf-8")], body: body)
    }
}
