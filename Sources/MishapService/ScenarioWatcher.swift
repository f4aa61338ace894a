import Logging
import MishapSupport
import Synchronization

/// Calls back when anything under a scenarios folder changes: a file written, added, removed
/// or renamed, in any sub-folder (`files/` included), and the folder or a sub-folder replaced
/// whole (removed and copied back, another moved into place, a symbolic link to it retargeted,
/// as Kubernetes updates a ConfigMap volume). It uses inotify (`FolderWatches` keeps the
/// watches on the folders the paths name now), and polls once a `pollInterval` when inotify is
/// unavailable. Bursts of changes (an editor saving through a temporary file) are reported
/// once, after `settle` of quiet.
public final class ScenarioWatcher: @unchecked Sendable {
    /// How changes are noticed: inotify, or polling when inotify is unavailable. It has
    /// `String` raw values, so that the startup line names it by `rawValue`: interpolating an
    /// enum without a description goes through `String(describing:)`, whose run-time
    /// protocol conformance lookups cost 0.7 million instructions at every start.
    public enum Mechanism: String, Sendable { case inotify, polling }

    public let directory: String
    public let settle: Duration
    public let pollInterval: Duration
    /// With inotify, how often the folders are walked again when nothing is reported, so a
    /// replacement no event told of (above the folder watched) is still picked up; nil: never.
    public let rearmInterval: Duration?
    private let onChange: @Sendable () -> Void
    private let logger: Logger

    private var thread: OwnThread?
    /// The write end wakes the watching thread to stop.
    private var wakeup: (read: Int32, write: Int32) = (-1, -1)
    private let running = Mutex(false)
    public private(set) var mechanism: Mechanism = .polling

    public init(directory: String, settle: Duration = .milliseconds(100), pollInterval: Duration = .milliseconds(500),
                rearmInterval: Duration? = .seconds(2), logger: Logger = Logger(label: "mishap.watch"),
                onChange: @escaping @Sendable () -> Void) {
        self.directory = directory
        self.settle = settle
        self.pollInterval = pollInterval
        self.rearmInterval = rearmInterval
        self.logger = logger
        self.onChange = onChange
    }

    /// Starts watching on a thread of its own; `forcePolling` skips inotify.
    public func start(forcePolling: Bool = false) throws {
        guard running.withLock({ running in
            defer { running = true }
            return !running
        }) else { return }
        guard let pipe = FileDescriptor.makePipe(nonBlocking: true) else {
            throw WatchError(reason: "pipe: \(Platform.describe(errno: errno))")
        }
        wakeup = pipe
        let events = forcePolling ? nil : FileEvents()
        mechanism = events != nil ? .inotify : .polling
        // The watches are in place before `start` returns: a change made right after it is
        // seen, however late the thread gets to run.
        var watches = events.map { FolderWatches(events: $0, root: directory) }
        watches?.rearm()
        let snapshot = events == nil ? Self.snapshot(of: directory) : [:]
        let context = WatchContext(watcher: self, events: events, watches: watches, snapshot: snapshot)
        guard let thread = OwnThread({ context.run() }) else {
            close(pipe.read)
            close(pipe.write)
            running.withLock { $0 = false }
            throw WatchError(reason: "cannot start a thread")
        }
        self.thread = thread
    }

    /// Stops watching and waits for the thread to end.
    public func stop() {
        guard running.withLock({ running in
            defer { running = false }
            return running
        }) else { return }
        var byte: UInt8 = 1
        _ = write(wakeup.write, &byte, 1)
        thread?.join()
        close(wakeup.read)
        close(wakeup.write)
    }

    deinit { stop() }

    struct WatchError: Error, CustomStringConvertible {
        let reason: String
        var description: String { "cannot watch the scenarios folder: \(reason)" }
    }

    /// The watching thread's state.
    private final class WatchContext {
        let watcher: ScenarioWatcher
        /// Folder notifications; nil when polling.
        let events: FileEvents?
        /// The watches, already armed; nil when polling.
        let watches: FolderWatches?
        /// When polling, the files as they were when watching started.
        let snapshot: [String: [Int]]

        init(watcher: ScenarioWatcher, events: FileEvents?, watches: FolderWatches?, snapshot: [String: [Int]]) {
            self.watcher = watcher
            self.events = events
            self.watches = watches
            self.snapshot = snapshot
        }

        func run() {
            if let events, let watches {
                runNotified(events, watches)
            } else {
                runPolling()
            }
        }

        // MARK: Notified

        /// Waits for events, reports once `settle` after the last one that concerns the
        /// scenarios, and walks the tree again after each to follow folders replaced. Every
        /// `rearmInterval` without events it walks the tree too, and a folder found replaced
        /// unreported counts as a change: watching never stays lost.
        private func runNotified(_ events: FileEvents, _ armed: FolderWatches) {
            var watches = armed
            /// When to report the changes seen; nil when there are none.
            var reportAt: ContinuousClock.Instant?
            var rearmAt = watcher.rearmInterval.map { ContinuousClock.now + $0 }
            while true {
                let wakeAt = [reportAt, rearmAt].compactMap { $0 }.min()
                var fds = [pollfd(fd: watcher.wakeup.read, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: events.descriptor, events: Int16(POLLIN), revents: 0)]
                let ready = poll(&fds, 2, wakeAt.map { milliseconds(ContinuousClock.now.duration(to: $0)) } ?? -1)
                if ready < 0 && errno == EINTR { continue }
                if fds[0].revents != 0 { return }
                if fds[1].revents != 0 && events.read().contains(where: watches.concerns) {
                    watches.rearm()
                    reportAt = .now + watcher.settle
                }
                let now = ContinuousClock.now
                if let due = reportAt, now >= due {
                    // Quiet for `settle` after changes: watch what is there now, then report once.
                    reportAt = nil
                    watches.rearm()
                    watcher.onChange()
                    rearmAt = watcher.rearmInterval.map { ContinuousClock.now + $0 }
                } else if reportAt == nil, let due = rearmAt, now >= due {
                    if watches.rearm() {
                        watcher.logger.debug("a folder under \(watcher.directory) was replaced unreported; reloading")
                        reportAt = now + watcher.settle
                    }
                    rearmAt = watcher.rearmInterval.map { now + $0 }
                }
            }
        }

        // MARK: Polling

        private func runPolling() {
            var last = snapshot
            var pending = false
            while true {
                var fds = [pollfd(fd: watcher.wakeup.read, events: Int16(POLLIN), revents: 0)]
                let ready = poll(&fds, 1, milliseconds(pending ? watcher.settle : watcher.pollInterval))
                if ready < 0 && errno == EINTR { continue }
                if fds[0].revents != 0 { return }
                let now = ScenarioWatcher.snapshot(of: watcher.directory)
                if now != last {
                    last = now
                    pending = true
                } else if pending {
                    pending = false
                    watcher.onChange()
                }
            }
        }

        /// A `poll` timeout: whole milliseconds, rounded up (waking early would only wait
        /// again), 0 for a time already past.
        private func milliseconds(_ duration: Duration) -> Int32 {
            guard duration > .zero else { return 0 }
            let (seconds, attoseconds) = duration.components
            return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
        }
    }

    /// The folder and its sub-folders (symbolic links to folders followed once).
    static func folders(under root: String) -> [String] {
        var result: [String] = []
        var queue = [root]
        var seen: Set<String> = []
        while let folder = queue.popLast() {
            guard let real = FileSystem.realPath(folder) else { continue }
            guard seen.insert(real).inserted else { continue }
            result.append(folder)
            for (name, isFolder) in FileSystem.entries(of: folder) where isFolder {
                queue.append(folder + "/" + name)
            }
        }
        return result
    }

    /// Every file under the folder with its size and modification time.
    static func snapshot(of root: String) -> [String: [Int]] {
        var files: [String: [Int]] = [:]
        for folder in folders(under: root) {
            for (name, isFolder) in FileSystem.entries(of: folder) where !isFolder {
                var info = stat()
                let path = folder + "/" + name
                if stat(path, &info) == 0 {
                    files[path] = [Int(info.st_size), Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec), Int(info.st_ino)]
                }
            }
        }
        return files
    }
}
