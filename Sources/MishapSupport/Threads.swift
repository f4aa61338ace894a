/// Threads of Mishap's own (the folder watcher, the scenario prefetch), started with pthreads
/// so they run outside Swift's cooperative pool and may block.
public final class OwnThread: @unchecked Sendable {
    private var thread = pthread_t()
    private let detached: Bool

    /// Starts `body` on a new thread; nil when the system refuses one. A detached thread is
    /// never joined; a joinable one is waited for by `join()`.
    public init?(detached: Bool = false, _ body: @escaping () -> Void) {
        self.detached = detached
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            box.body()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            return nil
        }
        if detached { pthread_detach(thread) }
    }

    /// Waits for a joinable thread to end (once; later calls return at once).
    public func join() {
        guard !detached, !joined else { return }
        joined = true
        pthread_join(thread, nil)
    }
    private var joined = false

    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}
