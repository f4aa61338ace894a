import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

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

    private var thread = pthread_t()
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
        var fds: [Int32] = [0, 0]
        guard makePipe(&fds, nonBlocking: true) else { throw WatchError(reason: "pipe: \(String(cString: strerror(errno)))") }
        wakeup = (fds[0], fds[1])
        let inotify = forcePolling ? -1 : inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        mechanism = inotify >= 0 ? .inotify : .polling
        let context = Unmanaged.passRetained(WatchContext(watcher: self, inotify: inotify)).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            let watch = Unmanaged<WatchContext>.fromOpaque(context!).takeRetainedValue()
            watch.run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<WatchContext>.fromOpaque(context).release()
            throw WatchError(reason: "cannot start a thread")
        }
    }

    /// Stops watching and waits for the thread to end.
    public func stop() {
        guard running.withLock({ running in
            defer { running = false }
            return running
        }) else { return }
        var byte: UInt8 = 1
        _ = write(wakeup.write, &byte, 1)
        pthread_join(thread, nil)
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
        let inotify: Int32
        /// Watch descriptors of the folders watched, by path.
        var watched: [String: Int32] = [:]

        init(watcher: ScenarioWatcher, inotify: Int32) {
            self.watcher = watcher
            self.inotify = inotify
        }

        func run() {
            if inotify >= 0 {
                watchFolders()
                runInotify()
                close(inotify)
            } else {
                runPolling()
            }
        }

        // MARK: inotify

        private func runInotify() {
            var pending = false
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                var fds = [pollfd(fd: watcher.wakeup.read, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
                let timeout = pending ? milliseconds(watcher.settle) : -1
                let ready = poll(&fds, 2, timeout)
                if ready < 0 && errno == EINTR { continue }
                if fds[0].revents != 0 { return }
                if ready == 0 {
                    // Quiet for `settle` after changes: report once.
                    pending = false
                    watchFolders()
                    watcher.onChange()
                    continue
                }
                if fds[1].revents != 0 {
                    while read(inotify, &buffer, buffer.count) > 0 {}
                    pending = true
                    watchFolders()
                }
            }
        }

        /// Adds a watch on the folder and every sub-folder not yet watched (new ones appear
        /// with edits).
        private func watchFolders() {
            let mask = UInt32(IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF
                | IN_MOVE_SELF | IN_ATTRIB | IN_MODIFY)
            for folder in ScenarioWatcher.folders(under: watcher.directory) where watched[folder] == nil {
                let descriptor = inotify_add_watch(inotify, folder, mask)
                if descriptor >= 0 { watched[folder] = descriptor }
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
            guard let resolved = realpath(folder, nil) else { continue }
            let real = String(cString: resolved)
            free(resolved)
            guard seen.insert(real).inserted else { continue }
            result.append(folder)
            for (name, isFolder) in entries(of: folder) where isFolder {
                queue.append(folder + "/" + name)
            }
        }
        return result
    }

    /// Every file under the folder with its size and modification time.
    static func snapshot(of root: String) -> [String: [Int]] {
        var files: [String: [Int]] = [:]
        for folder in folders(under: root) {
            for (name, isFolder) in entries(of: folder) where !isFolder {
                var info = stat()
                let path = folder + "/" + name
                if stat(path, &info) == 0 {
                    files[path] = [Int(info.st_size), Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec), Int(info.st_ino)]
                }
            }
        }
        return files
    }

    /// A folder's entries (not `.` and `..`), and whether each is a folder (links followed).
    private static func entries(of folder: String) -> [(String, Bool)] {
        guard let stream = opendir(folder) else { return [] }
        defer { closedir(stream) }
        var result: [(String, Bool)] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var info = stat()
            let isFolder = stat(folder + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
            result.append((name, isFolder))
        }
        return result
    }
}

/// A pipe whose ends close on exec (and, if asked, never block).
func makePipe(_ fds: inout [Int32], nonBlocking: Bool = false) -> Bool {
    guard pipe(&fds) == 0 else { return false }
    for fd in fds {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    }
    return true
}
