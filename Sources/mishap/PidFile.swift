import ArgumentParser
import MishapSupport

/// The pid file options of `start`, `stop` and `status`.
struct PidFileOption: ParsableArguments {
    @Option(name: .customLong("pid-file"), help: ArgumentHelp("The pid file: the process id, and the URL on a second line.", valueName: "path"))
    var pidFile: String = "./mishap.pid"
}

/// A pid file's contents, and whether its process is a running Mishap.
struct PidFile {
    let path: String
    let pid: pid_t
    let url: String?

    /// The file's contents; nil when there is no readable pid file.
    static func read(_ path: String) -> PidFile? {
        guard let text = FileSystem.readText(path) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.first, let pid = pid_t(first.trimmingSpaces), pid > 0 else { return nil }
        let url = lines.count > 1 && !lines[1].isEmpty ? String(lines[1]) : nil
        return PidFile(path: path, pid: pid, url: url)
    }

    /// True when the process exists and is a `mishap` (a pid reused by something else is not).
    var isRunning: Bool {
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let commandLine = FileSystem.readText("/proc/\(pid)/cmdline") else { return true }
        let program = commandLine.split(separator: "\0", maxSplits: 1).first.map(String.init) ?? ""
        // A zombie (exited, not yet reaped) has an empty command line.
        guard !program.isEmpty else { return false }
        return program.split(separator: "/").last?.hasPrefix("mishap") ?? false
    }
}

extension Substring {
    /// The text without its leading and trailing whitespace.
    var trimmingSpaces: Substring {
        var text = self
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        return text
    }
}

/// Removes the pid file if it still names `pid` (a newer server may have replaced it).
func removePidFile(_ path: String, ifItIs pid: pid_t) {
    if PidFile.read(path)?.pid == pid { unlink(path) }
}
