import Foundation
import Testing

/// Where the tests of a suite marked `.onBlockingThreads` run: a pool of plain threads that grows
/// whenever every thread is busy, so a test may block (on `recv`, `poll`, `usleep`, a child
/// process, `stop(grace:)`) for as long as it needs without holding anyone else up.
///
/// Why: Swift Testing runs tests in parallel on Swift's cooperative thread pool, which has one
/// thread per processor: two on the 2-core CI machine. Two tests blocked for seconds on a socket
/// took both threads, and every other test's `Task.sleep` and continuations waited with them:
/// a request journaled at once was seen 5 s later, after its 5 s delay was over, and a
/// `Retry-After` date reached the client 6 s old. Running the tests here keeps the cooperative
/// pool free whatever a test does.
public final class BlockingTestExecutor: TaskExecutor, @unchecked Sendable {
    /// The one pool every marked suite shares.
    public static let shared = BlockingTestExecutor()

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var nextJob = 0
    private var waiting = 0

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        // Each pending job needs a waiting thread of its own; a thread that is running a job
        // may be blocked for seconds, so it does not count.
        if waiting >= jobs.count - nextJob {
            condition.signal()
        } else {
            let thread = Thread { [unowned self] in work() }
            thread.name = "blocking-test"
            thread.start()
        }
        condition.unlock()
    }

    /// A thread's life: run the next job, or wait for one.
    private func work() {
        let executor = asUnownedTaskExecutor()
        condition.lock()
        while true {
            waiting += 1
            while nextJob == jobs.count { condition.wait() }
            waiting -= 1
            let job = jobs[nextJob]
            nextJob += 1
            if nextJob == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                nextJob = 0
            }
            condition.unlock()
            job.runSynchronously(on: executor)
            condition.lock()
        }
    }
}

/// Runs each test of the suite (and every task it starts) on `BlockingTestExecutor`, off
/// Swift's cooperative pool.
public struct BlockingThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(BlockingTestExecutor.shared) { try await function() }
    }
}

extension Trait where Self == BlockingThreadsTrait {
    /// The suite's tests may block their thread (sockets, sleeps, processes): they run on
    /// threads of their own, never on Swift's cooperative pool.
    public static var onBlockingThreads: Self { BlockingThreadsTrait() }
}
