/// Change notifications for folders, where the system has them: inotify on Linux. Elsewhere
/// `FileEvents()` is nil and callers poll instead (the folder watcher does; `--watch poll`
/// runs that fallback on Linux too, so it is tested).
public final class FileEvents {
    /// Readable when events are pending (for `poll`).
    public let descriptor: Int32
    /// Watches by folder path.
    private var watched: [String: Int32] = [:]

    /// A new, empty set of watches; nil when the system has no folder notifications.
    public init?() {
        #if os(Linux)
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
        #else
        return nil
        #endif
    }

    deinit { close(descriptor) }

    /// Watches a folder (not its sub-folders) for files written, created, deleted, moved or
    /// changed, and for the folder itself going. Watching a folder twice does nothing.
    public func watch(folder: String) {
        #if os(Linux)
        guard watched[folder] == nil else { return }
        let mask = UInt32(IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF
            | IN_MOVE_SELF | IN_ATTRIB | IN_MODIFY)
        let watch = inotify_add_watch(descriptor, folder, mask)
        if watch >= 0 { watched[folder] = watch }
        #endif
    }

    /// Reads and discards the events pending (callers only need to know that something changed).
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while read(descriptor, &buffer, buffer.count) > 0 {}
    }
}
