import MishapSupport

/// The inotify watches that follow a scenarios folder as it is now: one on the folder and each
/// of its sub-folders, and one on the folder above it, which sees the scenarios folder itself
/// deleted, replaced, moved into place or, when it is a symbolic link, retargeted.
///
/// A watch follows a folder, not its path: after `rm -rf sc && cp -r new sc` the path `sc`
/// names a folder nobody watches. So the watches are not added once and remembered by path;
/// `rearm()` walks the tree again after every change and watches what the paths name now,
/// dropping the watches of folders that left the tree.
struct FolderWatches {
    let events: FileEvents
    /// The scenarios folder as given (a symbolic link stays one: its target is looked up anew).
    let root: String
    /// The folder holding `root` and `root`'s name in it; nil when there is none to watch (`.`, `/`).
    let above: (folder: String, name: String)?
    /// The folders watched, by watch.
    private(set) var folders: [Int32: String] = [:]
    /// The watch on `above.folder`.
    private(set) var aboveWatch: Int32?

    init(events: FileEvents, root: String) {
        self.events = events
        self.root = root
        above = Self.above(root)
    }

    /// The folder holding `path` and `path`'s last name (trailing slashes ignored).
    static func above(_ path: String) -> (folder: String, name: String)? {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let folder: Substring
        let name: Substring
        if let slash = trimmed.lastIndex(of: "/") {
            name = trimmed[trimmed.index(after: slash)...]
            folder = slash == trimmed.startIndex ? "/" : trimmed[..<slash]
        } else {
            name = trimmed
            folder = "."
        }
        guard !name.isEmpty, name != ".", name != ".." else { return nil }
        return (String(folder), String(name))
    }

    /// Watches the folder above, the scenarios folder and every sub-folder as the paths name
    /// them now (links to folders followed, each folder once), and stops the watches of folders
    /// no longer among them. Each folder is watched before it is listed, so a sub-folder made
    /// meanwhile is either listed or reported. Returns whether a folder is watched now that was
    /// not before (one replaced or added: what it holds may not have been reported).
    @discardableResult
    mutating func rearm() -> Bool {
        let previous = folders
        let previousAbove = aboveWatch
        // The folder above first: when it is also in the tree, the tree's wider scope wins.
        aboveWatch = above.flatMap { events.watch(folder: $0.folder, scope: .entries) }
        var current: [Int32: String] = [:]
        var queue = [root]
        while let folder = queue.popLast() {
            // The same folder reached twice (through a link) has the same watch: a loop ends.
            guard let watch = events.watch(folder: folder, scope: .contents), current[watch] == nil else { continue }
            current[watch] = folder
            for (name, isFolder) in FileSystem.entries(of: folder) where isFolder {
                queue.append(folder + "/" + name)
            }
        }
        for watch in previous.keys where current[watch] == nil && watch != aboveWatch {
            events.unwatch(watch)
        }
        if let previousAbove, previousAbove != aboveWatch, current[previousAbove] == nil {
            events.unwatch(previousAbove)
        }
        folders = current
        return current.keys.contains { previous[$0] == nil }
    }

    /// Whether an event may change the scenarios: any in the tree (a folder gone included),
    /// lost events, and in the folder above only those naming the scenarios folder (its
    /// neighbours come and go unheeded). Events of watches already dropped are stale.
    func concerns(_ event: FileEvents.Event) -> Bool {
        if event.overflowed || folders[event.watch] != nil { return true }
        if let above, let aboveWatch, event.watch == aboveWatch {
            return event.folderGone || event.name == above.name
        }
        return false
    }
}
