import Synchronization

/// The `UpstreamClient` of a server, started when first needed: at once for a server with an
/// upstream of its own (`--upstream`), else by the first request a rule's `proxy` sends on. A
/// server that never proxies never loads libcurl or starts the client's thread.
public final class LazyUpstreamClient: Sendable {
    private enum Slot {
        case notStarted
        case started(UpstreamClient)
        /// libcurl could not load, or the thread could not start: why, in a sentence.
        case failed(String)
        case stopped
    }

    private let slot = Mutex(Slot.notStarted)
    /// How long a call may take, connecting included.
    public let timeoutMilliseconds: Int
    /// A file of CA certificates to trust for HTTPS upstreams instead of the system's.
    public let caFile: String?
    /// What answers' bodies may hold together (`UpstreamClient.memory`).
    public let memoryBytes: Int

    public init(timeoutMilliseconds: Int, caFile: String? = nil, memoryBytes: Int = UpstreamClient.defaultMemoryBytes) {
        self.timeoutMilliseconds = timeoutMilliseconds
        self.caFile = caFile
        self.memoryBytes = memoryBytes
    }

    /// The client, started now when it was not: or why it cannot be (libcurl is missing, the
    /// thread could not start, the server stops).
    public func client() -> Result<UpstreamClient, UpstreamFailure> {
        slot.withLock { slot in
            switch slot {
            case .started(let client): return .success(client)
            case .failed(let reason): return .failure(UpstreamFailure(.other, reason))
            case .stopped: return .failure(UpstreamFailure(.cancelled, "Mishap is stopping"))
            case .notStarted:
                if let client = UpstreamClient(timeoutMilliseconds: timeoutMilliseconds, caFile: caFile, memoryBytes: memoryBytes) {
                    slot = .started(client)
                    return .success(client)
                }
                let reason = UpstreamClient.loadLibrary() ?? "the thread that calls upstream servers could not start"
                slot = .failed(reason)
                return .failure(UpstreamFailure(.other, reason))
            }
        }
    }

    /// Cancels the calls still waiting (see `UpstreamClient.stop`); later calls are cancelled.
    public func stop() {
        let started = slot.withLock { slot -> UpstreamClient? in
            defer { slot = .stopped }
            if case .started(let client) = slot { return client }
            return nil
        }
        started?.stop()
    }
}
