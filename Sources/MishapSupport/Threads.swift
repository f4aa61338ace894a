#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

/// A gate that opens once: threads that `wait()` block until one calls `open()` (and pass at
/// once after). POSIX mutex and condition, which every platform has (unnamed semaphores are
/// missing on Apple's systems).
public final class Latch: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var isOpen = false

    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Opens the gate and wakes every waiter.
    public func open() {
        pthread_mutex_lock(mutex)
        isOpen = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Blocks until the gate is open.
    public func wait() {
        pthread_mutex_lock(mutex)
        while !isOpen { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }
}
