#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Change notifications for folders, where the system has them: inotify on Linux. Elsewhere
/// `FileEvents()` is nil and callers poll instead (the folder watcher does; `--watch poll`
/// runs that fallback on Linux too, so it is tested).
///
/// A watch follows a folder itself (its inode), not its path: a folder deleted and made again,
/// or another moved to its name, is a different folder that must be watched anew. `watch`
/// returns the same number for the same folder however often it is called, so callers keep
/// their watches right by calling it again for every folder they want after each change, and
/// `unwatch`ing the numbers no longer returned.
public final class FileEvents {
    /// One notification: something happened in a watched folder, or to the folder itself.
    public struct Event: Sendable, Equatable {
        /// The watch it came on, as `watch(folder:)` returned it; -1 when events were lost.
        public let watch: Int32
        /// The entry of the folder concerned; empty when it is the folder itself.
        public let name: String
        /// The entry concerned is a folder.
        public let isFolder: Bool
        /// The watched folder itself was deleted, moved or unmounted, or its watch removed:
        /// its path may now name another folder, or none.
        public let folderGone: Bool
        /// The system dropped events (its queue was full): anything may have changed.
        public let overflowed: Bool
        /// What happened to the entry's contents.
        public let change: Change

        /// What an event says of the entry's contents.
        public enum Change: Sendable, Equatable {
            /// A file was made or written in place: it may still be being written.
            case written
            /// The entry was renamed into or out of the folder, or deleted: its name now names
            /// a whole file (an editor's atomic save) or none.
            case moved
            /// Anything else: attributes, a folder, the watched folder itself.
            case other
        }

        /// An event as `read()` gives it (tests make their own).
        public init(watch: Int32, name: String, isFolder: Bool = false, folderGone: Bool = false, overflowed: Bool = false,
                    change: Change = .other) {
            self.watch = watch
            self.name = name
            self.isFolder = isFolder
            self.folderGone = folderGone
            self.overflowed = overflowed
            self.change = change
        }
    }

    /// What a watch reports.
    public enum Scope: Sendable {
        /// Files written, created, deleted, moved or changed in the folder, and the folder going.
        case contents
        /// Only entries appearing, going or changing their attributes (not writes to files):
        /// for the folder above a watched one, to see that one replaced.
        case entries
    }

    /// Readable when events are pending (for `poll`).
    public let descriptor: Int32

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

    /// Watches the folder at `path` (a link to one is followed; not its sub-folders) and returns
    /// the watch's number, the same for the same folder every time; nil when `path` is not a
    /// folder that can be watched. Calling it again for a folder already watched sets its scope.
    @discardableResult
    public func watch(folder path: String, scope: Scope = .contents) -> Int32? {
        #if os(Linux)
        let always = IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
        let mask = switch scope {
        case .contents: always | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_MODIFY
        case .entries: always | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB
        }
        let watch = inotify_add_watch(descriptor, path, UInt32(mask))
        return watch >= 0 ? watch : nil
        #else
        return nil
        #endif
    }

    /// Stops a watch (one whose folder went is removed already: nothing happens).
    public func unwatch(_ watch: Int32) {
        #if os(Linux)
        _ = inotify_rm_watch(descriptor, watch)
        #endif
    }

    /// The events pending, in order; empty when there are none.
    public func read() -> [Event] {
        var events: [Event] = []
        #if os(Linux)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            buffer.withUnsafeBytes { raw in
                // struct inotify_event: int wd; uint32_t mask, cookie, len; char name[len].
                let header = 16
                var offset = 0
                while offset + header <= count {
                    let watch = raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameBytes = raw[(offset + header)..<min(count, offset + header + length)]
                    let name = String(decoding: nameBytes.prefix(while: { $0 != 0 }), as: UTF8.self)
                    let isFolder = mask & UInt32(IN_ISDIR) != 0
                    let change: Event.Change
                    if !isFolder && mask & UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE) != 0 {
                        change = .written
                    } else if mask & UInt32(IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE) != 0 {
                        change = .moved
                    } else {
                        change = .other
                    }
                    events.append(Event(
                        watch: watch, name: name, isFolder: isFolder,
                        folderGone: mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT) != 0,
                        overflowed: mask & UInt32(IN_Q_OVERFLOW) != 0, change: change))
                    offset += header + length
                }
            }
        }
        #endif
        return events
    }

    /// Reads and discards the events pending.
    public func drain() {
        _ = read()
    }
}
