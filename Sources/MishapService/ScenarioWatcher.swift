import Logging
import MishapSupport
import Synchronization

/// Calls back when anything under a scenarios folder changes: a file written, added, removed
/// or renamed, in any sub-folder (`files/` included). It uses inotify, and polls once a
/// `pollInterval` when inotify is unavailable. Bursts of changes (an editor saving through a
/// temporary file) are reported once, after `settle` of quiet.
public final class ScenarioWatcher: @unchecked Sendable {
    public enum Mechanism: Sendable { case inotify, polling }

    public let directory: String
    public let settle: Duration
    public let pollInterval: Duration
    private let onChange: @Sendable () -> Void
    private let logger: Logger

    private var thread: OwnThread?
    /// The write end wakes the watching thread to stop.
    private var wakeup: (read: Int32, write: Int32) = (-1, -1)
    private let running = Mutex(false)
    public private(set) var mechanism: Mechanism = .polling

    public init(directory: String, settle: Duration = .milliseconds(100), pollInterval: Duration = .milliseconds(500),
                logger: Logger = Logger(label: "mishap.watch"), onChange: @escaping @Sendable () -> Void) {
        self.directory = directory
        self.settle = settle
        self.pollInterval = pollInterval
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
        let context = WatchContext(watcher: self, events: events)
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

        init(watcher: ScenarioWatcher, events: FileEvents?) {
            self.watcher = watcher
            self.events = events
        }

        func run() {
            if let events {
                watchFolders(events)
                runNotified(events)
            } else {
                runPolling()
            }
        }

        // MARK: Notified

        private func runNotified(_ events: FileEvents) {
            var pending = false
            while true {
                var fds = [pollfd(fd: watcher.wakeup.read, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: events.descriptor, events: Int16(POLLIN), revents: 0)]
                let timeout = pending ? milliseconds(watcher.settle) : -1
                let ready = poll(&fds, 2, timeout)
                if ready < 0 && errno == EINTR { continue }
                if fds[0].revents != 0 { return }
                if ready == 0 {
                    // Quiet for `settle` after changes: report once.
                    pending = false
                    watchFolders(events)
                    watcher.onChange()
                    continue
                }
                if fds[1].revents != 0 {
                    events.drain()
                    pending = true
                    watchFolders(events)
                }
            }
        }

        /// Adds a watch on the folder and every sub-folder not yet watched (new ones appear
        /// with edits).
        private func watchFolders(_ events: FileEvents) {
            for folder in ScenarioWatcher.folders(under: watcher.directory) {
                events.watch(folder: folder)
            }
        }

        // MARK: Polling

        private func runPolling() {
            var last = ScenarioWatcher.snapshot(of: watcher.directory)
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

        private func milliseconds(_ duration: Duration) -> Int32 {
            let (seconds, attoseconds) = duration.components
            return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
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
