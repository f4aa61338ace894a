import Logging
import MishapSupport
import Synchronization

/// Calls back when anything under a scenarios folder changes: a file written, added, removed
/// or renamed, in any sub-folder (`files/` included), and the folder or a sub-folder replaced
/// whole (removed and copied back, another moved into place, a symbolic link to it retargeted,
/// as Kubernetes updates a ConfigMap volume). It uses inotify (`FolderWatches` keeps the
/// watches on the folders the paths name now), and polls once a `pollInterval` when inotify is
/// unavailable. Bursts of changes (an editor saving through a temporary file) are reported
/// once, after `settle` of quiet; a file written in place (or made) is reported once it has not
/// changed for `writeSettle`, so one written in several steps is never read half-written, while
/// one renamed into place (an atomic save) is reported after the quiet alone (`PendingChanges`).
public final class ScenarioWatcher: @unchecked Sendable {
    /// How changes are noticed: inotify, or polling when inotify is unavailable. It has
    /// `String` raw values, so that the startup line names it by `rawValue`: interpolating an
    /// enum without a description goes through `String(describing:)`, whose run-time
    /// protocol conformance lookups cost 0.7 million instructions at every start.
    public enum Mechanism: String, Sendable { case inotify, polling }

    /// How long a file written in place must stay unchanged before a change to it is reported,
    /// unless `init` is told otherwise (`serve --watch-settle`).
    public static let defaultWriteSettle = Duration.milliseconds(300)

    public let directory: String
    public let settle: Duration
    /// How long a file written in place (or made) must stay unchanged.
    public let writeSettle: Duration
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

    public init(directory: String, settle: Duration = .milliseconds(100), writeSettle: Duration = ScenarioWatcher.defaultWriteSettle,
                pollInterval: Duration = .milliseconds(500), rearmInterval: Duration? = .seconds(2),
                logger: Logger = Logger(label: "mishap.watch"), onChange: @escaping @Sendable () -> Void) {
        self.directory = directory
        self.settle = settle
        self.writeSettle = max(writeSettle, settle)
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
            throw WatchError(reason: "pipe: \(Platform.describeLastError())")
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
            FileDescriptor.close(pipe.read)
            FileDescriptor.close(pipe.write)
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
        FileDescriptor.writeByte(wakeup.write)
        thread?.join()
        FileDescriptor.close(wakeup.read)
        FileDescriptor.close(wakeup.write)
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

        /// Waits for events, reports once the changes that concern the scenarios have settled
        /// (`PendingChanges`), and walks the tree again after each event to follow folders
        /// replaced. Every `rearmInterval` without events it walks the tree too, and a folder
        /// found replaced unreported counts as a change: watching never stays lost.
        private func runNotified(_ events: FileEvents, _ armed: FolderWatches) {
            var watches = armed
            var pending = PendingChanges(settle: watcher.settle, writeSettle: watcher.writeSettle)
            var rearmAt = watcher.rearmInterval.map { ContinuousClock.now + $0 }
            while true {
                let reportAt = pending.reportAt
                let wakeAt = [reportAt, rearmAt].compactMap { $0 }.min()
                let ready = Socket.waitForReading([watcher.wakeup.read, events.descriptor],
                                                  timeoutMilliseconds: wakeAt.map { milliseconds(ContinuousClock.now.duration(to: $0)) } ?? -1)
                    ?? [false, false]
                if ready[0] { return }
                if ready[1] {
                    let seen = ContinuousClock.now
                    let concerning = events.read().filter(watches.concerns)
                    for event in concerning {
                        pending.note(event.change, of: event.isFolder ? nil : "\(event.watch)/\(event.name)", at: seen)
                    }
                    if !concerning.isEmpty { watches.rearm() }
                }
                let now = ContinuousClock.now
                if let due = pending.reportAt, now >= due {
                    // Settled after changes: watch what is there now, then report once.
                    pending.reset()
                    watches.rearm()
                    watcher.onChange()
                    rearmAt = watcher.rearmInterval.map { ContinuousClock.now + $0 }
                } else if pending.reportAt == nil, let due = rearmAt, now >= due {
                    if watches.rearm() {
                        watcher.logger.debug("a folder under \(watcher.directory) was replaced unreported; reloading")
                        pending.note(.other, at: now)
                    }
                    rearmAt = watcher.rearmInterval.map { now + $0 }
                }
            }
        }

        // MARK: Polling

        /// Compares the folder with what it was every `pollInterval` (sooner when changes are
        /// due to be reported), and reports once they have settled (`PendingChanges`), checking
        /// first that nothing changed since. A file whose inode is unchanged but its size or
        /// time is counts as written in place, and so does a file that appears with an inode
        /// not seen before; one that appears with another file's inode (renamed within the
        /// folder), a new inode under an old name (renamed into place) and one gone are moved.
        private func runPolling() {
            var last = snapshot
            var pending = PendingChanges(settle: watcher.settle, writeSettle: watcher.writeSettle)
            while true {
                let wait = pending.reportAt.map { min(ContinuousClock.now.duration(to: $0), watcher.pollInterval) }
                let ready = Socket.waitForReading([watcher.wakeup.read], timeoutMilliseconds: milliseconds(wait ?? watcher.pollInterval))
                if ready?[0] == true { return }
                let current = ScenarioWatcher.snapshot(of: watcher.directory)
                let now = ContinuousClock.now
                if current != last {
                    let inodes = Set(last.values.map { $0[3] })
                    for (path, file) in current where last[path] != file {
                        let change: FileEvents.Event.Change
                        if let before = last[path] {
                            change = before[3] == file[3] ? .written : .moved
                        } else {
                            change = inodes.contains(file[3]) ? .moved : .written
                        }
                        pending.note(change, of: path, at: now)
                    }
                    for path in last.keys where current[path] == nil { pending.note(.moved, of: path, at: now) }
                    last = current
                } else if let due = pending.reportAt, now >= due {
                    pending.reset()
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
                let path = folder + "/" + name
                if let status = FileSystem.status(path) {
                    files[path] = [status.size, status.modifiedSeconds, status.modifiedNanoseconds, status.inode]
                }
            }
        }
        return files
    }
}
