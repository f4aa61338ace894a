import CCurl
import CCurlShim
import MishapSupport

/// One call in flight: its libcurl easy handle, what it sends, and what has come back so far.
/// Only the client's thread touches it once it is started (libcurl calls the callbacks there).
final class UpstreamTransfer {
    let handle: UnsafeMutableRawPointer
    let completion: @Sendable (UpstreamResult, UpstreamReport) -> Void
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// libcurl writes its detailed error message here (`CURLOPT_ERRORBUFFER`).
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private let started = MonotonicClock.nanoseconds()
    private let maximumBodyBytes: Int

    /// The last response's header lines (reset at each status line: `100 Continue` comes first),
    /// made into what HTTP/1.1 allows.
    var headers = UpstreamHeaderLines()
    var body: [UInt8] = []
    /// The memory budget's share the body holds: grown before the body's storage is.
    let memory: MemoryLease
    /// Set when the body outgrew `maximumBodyBytes`, or the budget: the transfer was stopped.
    var tooLarge = false
    var overBudget = false

    /// A transfer of `call`, ready to be added to a multi handle; nil when libcurl refuses one.
    /// Its body is held under `memory`, a lease of the client's budget.
    init?(_ call: UpstreamCall, timeoutMilliseconds: Int, caFile: String?, maximumBodyBytes: Int, memory: MemoryLease,
          completion: @escaping @Sendable (UpstreamResult, UpstreamReport) -> Void) {
        guard let handle = mishap_curl_easy_init() else { return nil }
        self.handle = handle
        self.completion = completion
        self.maximumBodyBytes = maximumBodyBytes
        self.memory = memory
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        configure(call, timeoutMilliseconds: timeoutMilliseconds, caFile: caFile)
    }

    deinit {
        mishap_curl_easy_cleanup(handle)
        mishap_curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    private func configure(_ call: UpstreamCall, timeoutMilliseconds: Int, caFile: String?) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        call.url.withCString { _ = mishap_curl_set_pointer(handle, CURLOPT_URL, $0) }  // libcurl copies strings.
        _ = mishap_curl_set_pointer(handle, CURLOPT_PRIVATE, context)
        _ = mishap_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = mishap_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = mishap_curl_set_long(handle, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        _ = mishap_curl_set_long(handle, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        _ = mishap_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, min(timeoutMilliseconds, 10_000))
        if let caFile { caFile.withCString { _ = mishap_curl_set_pointer(handle, CURLOPT_CAINFO, $0) } }
        _ = mishap_curl_set_write_function(handle, { data, size, count, context in
            guard let context else { return 0 }
            let transfer = Unmanaged<UpstreamTransfer>.fromOpaque(context).takeUnretainedValue()
            return transfer.received(data, size * count)
        })
        _ = mishap_curl_set_pointer(handle, CURLOPT_WRITEDATA, context)
        _ = mishap_curl_set_header_function(handle, { data, size, count, context in
            guard let context else { return 0 }
            let transfer = Unmanaged<UpstreamTransfer>.fromOpaque(context).takeUnretainedValue()
            transfer.receivedHeader(data, size * count)
            return size * count
        })
        _ = mishap_curl_set_pointer(handle, CURLOPT_HEADERDATA, context)

        // The method as sent; HEAD asks for no body, or libcurl would wait for one.
        if call.method == "HEAD" {
            _ = mishap_curl_set_long(handle, CURLOPT_NOBODY, 1)
        } else if call.method != "GET" || !call.body.isEmpty {
            call.method.withCString { _ = mishap_curl_set_pointer(handle, CURLOPT_CUSTOMREQUEST, $0) }
        }
        if !call.body.isEmpty || ["POST", "PUT", "PATCH"].contains(call.method) {
            _ = mishap_curl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(call.body.count))
            call.body.withUnsafeBytes { _ = mishap_curl_set_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress ?? UnsafeRawPointer(errorBuffer)) }
        }

        // libcurl adds headers of its own: an empty value takes each away unless the client
        // sent it (`Accept: */*`, a form's `Content-Type` for a body, `Expect: 100-continue`).
        var lines = call.headers.map { "\($0.name): \($0.value)" }
        let sent = Set(call.headers.map { $0.name.lowercased() })
        for name in ["Accept", "Content-Type", "Expect"] where !sent.contains(name.lowercased()) {
            lines.append("\(name):")
        }
        for line in lines {
            if let appended = mishap_curl_slist_append(headerList, line) { headerList = appended }
        }
        _ = mishap_curl_set_pointer(handle, CURLOPT_HTTPHEADER, headerList)
    }

    /// A piece of the body: kept, unless it makes the body too large, or the answers held
    /// together pass the memory budget (0 stops the transfer). The body's storage is reserved
    /// here, the budget first: for the whole `Content-Length` at once when the answer has one,
    /// else doubling as it grows.
    private func received(_ data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard count > 0, let data else { return count }
        let needed = body.count + count
        guard needed <= maximumBodyBytes else {
            tooLarge = true
            return 0
        }
        if needed > body.capacity {
            let declared = body.isEmpty ? declaredLength.flatMap { $0 >= needed && $0 <= maximumBodyBytes ? $0 : nil } : nil
            let capacity = declared ?? min(maximumBodyBytes, max(needed, body.capacity * 2, 16 * 1024))
            guard memory.grow(to: capacity) else {
                overBudget = true
                return 0
            }
            body.reserveCapacity(capacity)
        }
        data.withMemoryRebound(to: UInt8.self, capacity: count) { body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
        return count
    }

    /// The final answer's `Content-Length`, when it gave one.
    private var declaredLength: Int? {
        headers.fields.last { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) }
    }

    /// A header line, or a status line (which starts a response's headers again), or the blank
    /// line that ends them.
    private func receivedHeader(_ data: UnsafeMutablePointer<CChar>?, _ count: Int) {
        guard count > 0, let data else { return }
        data.withMemoryRebound(to: UInt8.self, capacity: count) { headers.take(UnsafeBufferPointer(start: $0, count: count)) }
    }

    /// The result of the finished transfer, given libcurl's code for it, and what was done to
    /// the answer's head on its way.
    func result(_ code: CURLcode) -> (UpstreamResult, UpstreamReport) {
        let milliseconds = Double(MonotonicClock.nanoseconds() - started) / 1_000_000
        var report = UpstreamReport(repairs: headers.repairs)
        if code == CURLE_OK {
            let status = mishap_curl_response_code(handle)
            guard status >= 200 else {
                // libcurl ends a call whose last answer is 1xx (`101 Switching Protocols`, asked
                // for or not) with that answer: passed on, the client would take the connection
                // for another protocol's, or wait for a final answer that never comes.
                let why = "its final answer was \(status), an interim status (\(status == 101 ? "a switch to another protocol, which Mishap does not pass on" : "1xx comes before a final answer")); refused"
                report.repairs.append(why)
                return (.failed(UpstreamFailure(.malformed, why), milliseconds: milliseconds), report)
            }
            report.memory = memory
            return (.answered(status: status, headers: headers.fields, body: body, milliseconds: milliseconds), report)
        }
        if tooLarge {
            return (.failed(UpstreamFailure(.tooLarge, "the answer's body is larger than \(maximumBodyBytes) bytes"), milliseconds: milliseconds), report)
        }
        if overBudget {
            let message = "Mishap holds \(memory.budget.bytesHeld) bytes of upstream answers, and this one (\(max(body.count, declaredLength ?? 0)) bytes "
                + "so far) would pass the most it holds at once (--upstream-memory \(memory.budget.limit)); it was stopped"
            return (.failed(UpstreamFailure(.memory, message), milliseconds: milliseconds), report)
        }
        let detail = String(cString: errorBuffer)
        let message = detail.isEmpty ? String(cString: mishap_curl_easy_strerror(code)) : detail
        return (.failed(UpstreamFailure(Self.kind(of: code), message), milliseconds: milliseconds), report)
    }

    static func kind(of code: CURLcode) -> UpstreamFailure.Kind {
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return .timeout
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_RECV_ERROR,
             CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE:
            return .unreachable
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            return .tls
        default: return .other
        }
    }
}
