// Which process a pid names: alive or not, whether it holds a given file open, and whether it is
// a Mishap server of an earlier version (which took no lock on its pid file).

import MishapSupport

/// What can be learnt about a process from its pid, without signalling it.
enum ProcessIdentity {
    /// True when the process exists and has not exited (a zombie, exited but not yet reaped by
    /// its parent, has).
    static func isAlive(_ pid: ProcessID) -> Bool {
        guard Processes.exists(pid) else { return false }
        #if os(Linux)
        guard let stat = FileSystem.readText("/proc/\(pid)/stat") else { return false }
        // The state follows the command name, which is in parentheses and may hold anything.
        guard let close = stat.lastIndex(of: ")") else { return true }
        let state = stat[stat.index(after: close)...].first { $0 != " " }
        return state != "Z" && state != "X"
        #else
        return true
        #endif
    }

    /// Whether the process holds `file` (a device and inode) open: true or false where the
    /// process's descriptors can be listed (`/proc/PID/fd` on Linux, for the same user or root);
    /// nil where they cannot, so nothing can be said.
    static func holdsOpen(_ pid: ProcessID, _ file: FileIdentity) -> Bool? {
        #if os(Linux)
        let folder = "/proc/\(pid)/fd"
        let entries = FileSystem.entries(of: folder)
        // A process always holds some descriptor; none listed means they cannot be read.
        guard !entries.isEmpty else { return nil }
        return entries.contains { FileIdentity(path: folder + "/" + $0.name) == file }
        #else
        return nil
        #endif
    }

    /// Whether the process runs a Mishap server of an earlier version for the pid file `path`:
    /// a program named `mishap` whose command line serves (`serve`, or no subcommand) with
    /// `--pid-file` naming that very file. Such a server took no lock on its pid file, so this is
    /// how its pid file is still recognised. False where command lines cannot be read.
    static func isUnlockedServer(_ pid: ProcessID, pidFile path: String) -> Bool {
        #if os(Linux)
        guard let commandLine = FileSystem.readText("/proc/\(pid)/cmdline") else { return false }
        let words = commandLine.split(separator: "\0").map(String.init)
        guard let program = words.first, program.split(separator: "/").last == "mishap" else { return false }
        if let command = words.dropFirst().first, ["start", "stop", "status", "validate", "routes"].contains(command) {
            return false
        }
        var named: String?
        for (index, word) in words.enumerated() {
            if word.hasPrefix("--pid-file=") {
                named = String(word.dropFirst("--pid-file=".count))
            } else if word == "--pid-file", index + 1 < words.count {
                named = words[index + 1]
            }
        }
        guard var named, !named.isEmpty else { return false }
        if !named.hasPrefix("/") {
            // Relative to that process's working folder.
            guard let folder = FileSystem.realPath("/proc/\(pid)/cwd") else { return false }
            named = folder + "/" + named
        }
        guard let ours = FileIdentity(path: path) else { return false }
        return FileIdentity(path: named) == ours
        #else
        return false
        #endif
    }
}
