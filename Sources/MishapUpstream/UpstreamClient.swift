import CCurl
import CCurlShim
import MishapSupport
import Synchronization

/// Sends calls to an upstream server with libcurl's multi interface, on one thread of its own:
/// however many calls wait for their answers, no other thread waits with them (the HTTP
/// server suspends each connection meanwhile), and connections to the upstream are kept and
/// reused between calls.
///
/// `send` may be called from any thread; each call's completion is called exactly once, on
/// the client's thread: with the answer, a failure, or `cancelled` when the client stops.
public final class UpstreamClient: Sendable {
    /// The largest answer body kept; a larger one fails the call (`tooLarge`).
    public static let maximumBodyBytes = 64 * 1024 * 1024
    /// The default of what answers' bodies may hold together: 256 MiB.
    public static let defaultMemoryBytes = 256 * 1024 * 1024

    /// How long a call may take, connecting included.
    public let timeoutMilliseconds: Int
    /// A file of CA certificates to trust for HTTPS upstreams instead of the system's.
    public let caFile: String?
    /// What the bodies of answers may hold together, from their first byte received until the
    /// last reference to each goes (the server keeps it until the response is sent).
    public let memory: MemoryBudget

    private struct Pending {
        var calls: [(UpstreamCall, @Sendable (UpstreamResult, UpstreamReport) -> Void)] = []
        var stopping = false
    }

    private let pending = Mutex(Pending())
    /// The multi handle (a pointer libcurl allows to be woken from any thread).
    private nonisolated(unsafe) let multi: UnsafeMutableRawPointer
    private nonisolated(unsafe) var thread: OwnThread?

    /// Loads libcurl and sets up its global state, once (later calls give the first one's
    /// answer): nil when it is ready, else why not (it is not installed, or too old).
    public static func loadLibrary() -> String? {
        var error = [CChar](repeating: 0, count: 512)
        guard mishap_curl_load(&error, error.count) != 0 else { return nil }
        return String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A client with its thread started; nil when libcurl (see `loadLibrary`) or the system
    /// refuse it. Answers' bodies hold at most `memoryBytes` together.
    public init?(timeoutMilliseconds: Int, caFile: String? = nil, memoryBytes: Int = UpstreamClient.defaultMemoryBytes) {
        guard Self.loadLibrary() == nil, let multi = mishap_curl_multi_init() else { return nil }
        self.multi = multi
        self.timeoutMilliseconds = timeoutMilliseconds
        self.caFile = caFile
        memory = MemoryBudget(limit: memoryBytes)
        thread = OwnThread { [self] in run() }
        if thread == nil {
            mishap_curl_multi_cleanup(multi)
            return nil
        }
    }

    /// Sends `call`; `completion` gets its result, once, on the client's thread, with what was
    /// done to the answer's head and the memory its body holds.
    public func send(_ call: UpstreamCall, completion: @escaping @Sendable (UpstreamResult, UpstreamReport) -> Void) {
        let accepted = pending.withLock { pending -> Bool in
            guard !pending.stopping else { return false }
            pending.calls.append((call, completion))
            return true
        }
        guard accepted else {
            completion(.failed(UpstreamFailure(.cancelled, "Mishap is stopping"), milliseconds: 0), UpstreamReport())
            return
        }
        mishap_curl_multi_wakeup(multi)
    }

    /// Cancels every call still waiting (each completes as `cancelled`) and ends the thread.
    /// Calls sent afterwards complete as `cancelled` at once.
    public func stop() {
        let first = pending.withLock { pending -> Bool in
            defer { pending.stopping = true }
            return !pending.stopping
        }
        guard first else { return }
        mishap_curl_multi_wakeup(multi)
        thread?.join()
        mishap_curl_multi_cleanup(multi)
    }

    /// The thread's loop: takes new calls, lets libcurl move every transfer on, finishes those
    /// done, and sleeps in `curl_multi_poll` until a socket is ready, a timer is due or `send`
    /// wakes it.
    private func run() {
        var active: [ObjectIdentifier: UpstreamTransfer] = [:]
        while true {
            let (calls, stopping) = pending.withLock { pending in
                defer { pending.calls = [] }
                return (pending.calls, pending.stopping)
            }
            if stopping {
                let cancelled = UpstreamFailure(.cancelled, "Mishap is stopping")
                for transfer in active.values {
                    mishap_curl_multi_remove_handle(multi, transfer.handle)
                    transfer.completion(.failed(cancelled, milliseconds: 0), UpstreamReport())
                }
                for (_, completion) in calls { completion(.failed(cancelled, milliseconds: 0), UpstreamReport()) }
                return
            }
            for (call, completion) in calls {
                guard let transfer = UpstreamTransfer(call, timeoutMilliseconds: timeoutMilliseconds, caFile: caFile,
                                                      maximumBodyBytes: Self.maximumBodyBytes, memory: memory.lease(),
                                                      completion: completion),
                      mishap_curl_multi_add_handle(multi, transfer.handle) == CURLM_OK else {
                    completion(.failed(UpstreamFailure(.other, "libcurl could not start the call"), milliseconds: 0), UpstreamReport())
                    continue
                }
                active[ObjectIdentifier(transfer)] = transfer
            }
            var running: Int32 = 0
            _ = mishap_curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = mishap_curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                      let context = mishap_curl_private(easy) else { continue }
                let code = message.pointee.data.result
                let transfer = Unmanaged<UpstreamTransfer>.fromOpaque(context).takeUnretainedValue()
                mishap_curl_multi_remove_handle(multi, easy)
                active[ObjectIdentifier(transfer)] = nil
                let (result, report) = transfer.result(code)
                transfer.completion(result, report)
            }
            _ = mishap_curl_multi_poll(multi, 1000)
        }
    }
}
