import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Work done on a thread of its own when asked, with the asks made meanwhile folded into one
/// run: `request()` costs the caller a lock and a signal, however long the work takes. Runs are
/// one at a time, at least `interval` apart (so work that grows with what it writes, such as a
/// file rewritten whole, costs at most a run per interval under any stream of asks), except
/// that `flush()` runs at once and returns once everything asked before it is done. The thread
/// starts on the first ask and ends after a second with nothing to do, so an idle worker holds
/// none; when the system refuses a thread, the work runs on the caller's.
public final class CoalescingWorker: @unchecked Sendable {
    private let work: @Sendable () -> Void
    /// Held while `work` runs: runs never overlap, on the thread or a caller's.
    private let running = Mutex(())
    private let interval: Int64
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Signalled on an ask (to the waiting thread), broadcast after a run (to flushes).
    private let asked = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let ran = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // The state below is only touched with `mutex` held.
    /// Asks made, and asks covered by the runs finished: a run covers every ask before it started.
    private var requested: UInt64 = 0
    private var completed: UInt64 = 0
    private var threadStarted = false
    /// Callers of `flush` waiting: the thread does not wait out the interval for them.
    private var flushing = 0
    /// When the last run ended (`MonotonicClock.nanoseconds()`).
    private var lastRun: Int64 = .min / 2

    /// A worker running `work` at most once per `intervalNanoseconds` while asked.
    public init(intervalNanoseconds: Int64, work: @escaping @Sendable () -> Void) {
        self.work = work
        interval = intervalNanoseconds
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(asked, nil)
        pthread_cond_init(ran, nil)
    }

    deinit {
        pthread_cond_destroy(ran)
        pthread_cond_destroy(asked)
        pthread_mutex_destroy(mutex)
        ran.deallocate()
        asked.deallocate()
        mutex.deallocate()
    }

    /// Asks for a run: soon after the last one's interval, on the worker's thread.
    public func request() {
        pthread_mutex_lock(mutex)
        requested += 1
        if !threadStarted {
            threadStarted = true
            // The thread holds the worker until it ends, a second after its last run.
            if OwnThread(detached: true, { [self] in run() }) == nil {
                threadStarted = false
                let target = requested
                pthread_mutex_unlock(mutex)
                running.withLock { _ in work() }
                finish(target)
                return
            }
        }
        pthread_cond_signal(asked)
        pthread_mutex_unlock(mutex)
    }

    /// Returns once every ask made before the call is done, asking for a run at once.
    public func flush() {
        pthread_mutex_lock(mutex)
        let target = requested
        flushing += 1
        pthread_cond_signal(asked)
        while completed < target { pthread_cond_wait(ran, mutex) }
        flushing -= 1
        pthread_mutex_unlock(mutex)
    }

    /// With the mutex not held: notes that the asks up to `target` are done.
    private func finish(_ target: UInt64) {
        pthread_mutex_lock(mutex)
        completed = max(completed, target)
        lastRun = MonotonicClock.nanoseconds()
        pthread_cond_broadcast(ran)
        pthread_mutex_unlock(mutex)
    }

    private func run() {
        pthread_mutex_lock(mutex)
        while true {
            if requested == completed {
                let waited = wait(nanoseconds: 1_000_000_000)
                if waited == ETIMEDOUT && requested == completed {
                    threadStarted = false
                    pthread_mutex_unlock(mutex)
                    return
                }
                continue
            }
            let due = lastRun + interval - MonotonicClock.nanoseconds()
            if flushing == 0 && due > 0 {
                _ = wait(nanoseconds: Int(due))
                continue
            }
            let target = requested
            pthread_mutex_unlock(mutex)
            running.withLock { _ in work() }
            pthread_mutex_lock(mutex)
            completed = target
            lastRun = MonotonicClock.nanoseconds()
            pthread_cond_broadcast(ran)
        }
    }

    /// With the mutex held: waits on `asked` for at most `nanoseconds`.
    private func wait(nanoseconds: Int) -> Int32 {
        var until = timespec()
        clock_gettime(CLOCK_REALTIME, &until)
        let total = Int(until.tv_nsec) + nanoseconds
        until.tv_sec += total / 1_000_000_000
        until.tv_nsec = total % 1_000_000_000
        return pthread_cond_timedwait(asked, mutex, &until)
    }
}
