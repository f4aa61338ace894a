import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes log lines to one file descriptor. Request lines are appended to a buffer and written
/// in batches by a thread of the writer's own, so a worker thread never waits on the log's
/// reader: the first line after a quiet spell wakes the thread at once; after each batch it
/// lets lines gather for 10 ms, so under load one `write` carries many lines and no request
/// pays for a wake-up. Other lines (warnings, reload
/// reports, startup) are written before their `log` call returns, after every line queued
/// before them, so the order of lines is the order of calls.
///
/// The buffer is bounded (`limit` bytes): when the reader cannot keep up, request lines past
/// it are dropped, counted, and the next batch ends with a line saying how many were dropped.
/// Nothing is dropped silently, and nothing else is dropped at all.
public final class LogWriter: @unchecked Sendable {
    /// The writer of standard output or standard error, shared by every handler that writes
    /// there, so the lines of every logger of the process come out in order (`droppedNotice` is
    /// used when the writer is created). Any other descriptor gets a writer of its own: a test's
    /// pipe is closed and its number reused, which a process-wide writer must not outlive.
    public static func shared(descriptor: Int32, droppedNotice: @escaping @Sendable (Int) -> [UInt8]) -> LogWriter {
        guard descriptor == 1 || descriptor == 2 else { return LogWriter(descriptor: descriptor, droppedNotice: droppedNotice) }
        return registry.withLock { writers in
            if let writer = writers[descriptor] { return writer }
            let writer = LogWriter(descriptor: descriptor, droppedNotice: droppedNotice)
            writers[descriptor] = writer
            return writer
        }
    }
    private static let registry = Mutex<[Int32: LogWriter]>([:])

    /// Where lines go.
    public let descriptor: Int32
    /// The most bytes queued; request lines beyond are dropped and counted.
    public let limit: Int
    /// The line saying that `count` request lines were dropped, in the log's format.
    private let droppedNotice: @Sendable (Int) -> [UInt8]

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Signalled when lines are queued for a sleeping writer thread.
    private let queued = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Broadcast when the writer thread has written a batch.
    private let written = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // The mutable state below is only touched with `mutex` held, which already makes every
    // access exclusive: the runtime's own exclusivity checks (a few hundred instructions per
    // request line) are left out for the two that are passed `inout` on every line.
    @exclusivity(unchecked) private var pending: [UInt8] = []
    @exclusivity(unchecked) private var timestamps = TimestampCache()
    private var dropped = 0
    private var threadStarted = false
    /// The writer thread waits for a first line (any new line wakes it).
    private var threadIdle = false
    /// The writer thread waits a moment after a batch so lines gather (only a caller waiting
    /// for its line wakes it early).
    private var threadNapping = false
    private var signalled = false
    /// Callers of `write` and `flush` waiting for their lines.
    private var waiters = 0
    /// How long the writer thread lets lines gather after writing a batch.
    private let gathering: Int = 10_000_000  // nanoseconds
    /// Batches queued and batches written: a synchronous line waits until its batch is out.
    private var queuedBatch: UInt64 = 0
    private var writtenBatch: UInt64 = 0

    public init(descriptor: Int32, limit: Int = 4 << 20, droppedNotice: @escaping @Sendable (Int) -> [UInt8]) {
        self.descriptor = descriptor
        self.limit = limit
        self.droppedNotice = droppedNotice
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(queued, nil)
        pthread_cond_init(written, nil)
    }

    deinit {
        pthread_cond_destroy(written)
        pthread_cond_destroy(queued)
        pthread_mutex_destroy(mutex)
        written.deallocate()
        queued.deallocate()
        mutex.deallocate()
    }

    /// Queues one request line, written by `format` straight into the buffer (no intermediate
    /// string), to be written soon by the writer thread; counted and dropped when the buffer
    /// is full.
    public func enqueue(_ format: (inout [UInt8]) -> Void) {
        enqueueTimestamped { out, _ in format(&out) }
    }

    /// Queues one request line, as above, with the writer's `TimestampCache` to write its time.
    public func enqueueTimestamped(_ format: (inout [UInt8], inout TimestampCache) -> Void) {
        pthread_mutex_lock(mutex)
        if pending.count >= limit {
            dropped += 1
            pthread_mutex_unlock(mutex)
            return
        }
        if !threadStarted { startThread() }
        if pending.isEmpty { pending.reserveCapacity(64 << 10) }
        format(&pending, &timestamps)
        if !threadStarted {
            // The system refused a thread: write here rather than hold lines no one writes.
            _ = FileDescriptor.writeAll(descriptor, pending)
            pending.removeAll(keepingCapacity: true)
        } else if threadIdle && !signalled {
            signalled = true
            pthread_cond_signal(queued)
        }
        pthread_mutex_unlock(mutex)
    }

    /// Writes `line` after every line queued before it, and returns once it is written.
    public func write(_ line: [UInt8]) {
        pthread_mutex_lock(mutex)
        guard threadStarted else {
            // No request line was ever queued: nothing to keep in order with.
            _ = FileDescriptor.writeAll(descriptor, line)
            pthread_mutex_unlock(mutex)
            return
        }
        pending.append(contentsOf: line)
        waitForBatch(queuedBatch + 1)
        pthread_mutex_unlock(mutex)
    }

    /// Returns once every line queued so far is written (at a server's stop), the batch the
    /// writer thread may be writing now included.
    public func flush() {
        pthread_mutex_lock(mutex)
        if threadStarted { waitForBatch(pending.isEmpty ? queuedBatch : queuedBatch + 1) }
        pthread_mutex_unlock(mutex)
    }

    /// With the mutex held: wakes the writer thread, idle or gathering, and waits until
    /// `batch` is written.
    private func waitForBatch(_ batch: UInt64) {
        guard writtenBatch < batch else { return }
        waiters += 1
        if (threadIdle || threadNapping) && !signalled {
            signalled = true
            pthread_cond_signal(queued)
        }
        while writtenBatch < batch { pthread_cond_wait(written, mutex) }
        waiters -= 1
    }

    /// Lines dropped since the last notice (for tests).
    public var droppedSinceNotice: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return dropped
    }

    /// Called with the mutex held. The thread ends after a second with nothing to write (the
    /// next request line starts another), so an idle writer holds no thread.
    private func startThread() {
        threadStarted = true
        if OwnThread(detached: true, { [self] in run() }) == nil {
            threadStarted = false
        }
    }

    private func run() {
        var batch: [UInt8] = []
        pthread_mutex_lock(mutex)
        while true {
            while pending.isEmpty {
                threadIdle = true
                let waited = wait(nanoseconds: 1_000_000_000)
                threadIdle = false
                signalled = false
                if waited == ETIMEDOUT && pending.isEmpty {
                    threadStarted = false
                    pthread_mutex_unlock(mutex)
                    return
                }
            }
            swap(&batch, &pending)
            queuedBatch += 1
            let droppedNow = dropped
            dropped = 0
            pthread_mutex_unlock(mutex)

            if droppedNow > 0 { batch.append(contentsOf: droppedNotice(droppedNow)) }
            _ = FileDescriptor.writeAll(descriptor, batch)
            // Keep a modest buffer for the next batch; let a burst's big one go.
            if batch.capacity > 1 << 20 { batch = [] } else { batch.removeAll(keepingCapacity: true) }

            pthread_mutex_lock(mutex)
            writtenBatch = queuedBatch
            pthread_cond_broadcast(written)
            // Under a steady stream, lines gather for a moment and go out together: no wake-up
            // per line, no write per line. Nobody waits for them meanwhile.
            if waiters == 0 {
                threadNapping = true
                _ = wait(nanoseconds: gathering)
                threadNapping = false
                signalled = false
            }
        }
    }

    /// With the mutex held: waits on `queued` for at most `nanoseconds`.
    private func wait(nanoseconds: Int) -> Int32 {
        var until = timespec()
        clock_gettime(CLOCK_REALTIME, &until)
        let total = Int(until.tv_nsec) + nanoseconds
        until.tv_sec += total / 1_000_000_000
        until.tv_nsec = total % 1_000_000_000
        return pthread_cond_timedwait(queued, mutex, &until)
    }
}

/// ISO 8601 times for log lines, the date and time of day worked out once per second: a line
/// written within the same second as the last copies them and adds its milliseconds.
public struct TimestampCache: Sendable {
    private var second: Int64 = .min
    /// `2026-11-21T09:30:12.` for `second`.
    private var prefix: [UInt8] = []

    public init() {}

    /// The most bytes `write` writes.
    public static let maximumBytes = 32

    /// Appends `2026-11-21T09:30:12.345Z` for `milliseconds` since 1970.
    public mutating func append(milliseconds: Int64, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maximumBytes) { buffer in
            let count = write(milliseconds: milliseconds, to: buffer.baseAddress!)
            out.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress!, count: count))
        }
    }

    /// Writes the same at `destination`, which has room for `maximumBytes`; returns how many
    /// bytes it wrote.
    public mutating func write(milliseconds: Int64, to destination: UnsafeMutablePointer<UInt8>) -> Int {
        let now = milliseconds / 1000
        if now != second {
            prefix.removeAll(keepingCapacity: true)
            WallClock.appendISO8601(milliseconds: now * 1000, to: &prefix)
            prefix.removeLast(4)  // "000Z"
            second = now
        }
        let count = prefix.count
        precondition(count + 4 <= Self.maximumBytes, "a timestamp longer than TimestampCache.maximumBytes")
        prefix.withUnsafeBufferPointer { destination.initialize(from: $0.baseAddress!, count: count) }
        let fraction = Int(milliseconds % 1000)
        destination[count] = UInt8(ascii: "0") + UInt8(fraction / 100)
        destination[count + 1] = UInt8(ascii: "0") + UInt8(fraction / 10 % 10)
        destination[count + 2] = UInt8(ascii: "0") + UInt8(fraction % 10)
        destination[count + 3] = UInt8(ascii: "Z")
        return count + 4
    }
}
