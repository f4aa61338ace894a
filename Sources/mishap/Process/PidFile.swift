import ArgumentParser
import MishapSupport

/// The pid file options of `start`, `stop` and `status`.
struct PidFileOption: ParsableArguments {
    @Option(name: .customLong("pid-file"), help: ArgumentHelp("The pid file: the process id, the URL on a second line, and the admin port's URL on a third with --admin-port ($MISHAP_PID_FILE when set).", valueName: "path"))
    var pidFile: String = PidFileOption.defaultPath

    /// The environment variable that names the pid file when `--pid-file` is not given: `serve`
    /// then writes one there, and every command that reads one reads it. The Docker image sets
    /// it, so its health check (`mishap status`) finds the server on whatever port it was given.
    static let variable = "MISHAP_PID_FILE"

    /// `$MISHAP_PID_FILE`, when set and not empty.
    static var fromEnvironment: String? {
        Platform.environment(variable).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Where the pid file is when none is given: `$MISHAP_PID_FILE`, else `./mishap.pid`.
    static var defaultPath: String { fromEnvironment ?? "./mishap.pid" }
}

/// A pid file's contents: the server's process id, and its URL once it serves. Files of just a
/// pid, as earlier versions could write, read as a pid without a URL.
struct PidFile {
    let path: String
    let pid: ProcessID
    let url: String?
    /// The admin port's URL (`serve --admin-port`), on a third line: where commands call the
    /// admin API, which stays up while the serving port is down.
    var adminURL: String?

    /// The file's contents; nil when there is no readable pid file, or no pid in it.
    static func read(_ path: String) -> PidFile? {
        FileSystem.readText(path).flatMap { parse($0, path: path) }
    }

    /// The contents of an open pid file (read from its start); nil when there is no pid in it.
    static func read(descriptor: Int32, path: String) -> PidFile? {
        let bytes = FileDescriptor.readFromStart(descriptor, limit: 64 << 10)
        return parse(String(decoding: bytes, as: UTF8.self), path: path)
    }

    /// A pid on the first line and, if any, a URL on the second.
    static func parse(_ text: String, path: String) -> PidFile? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.first, let pid = ProcessID(first.trimmingASCIIWhitespace()), pid > 0 else { return nil }
        let url = lines.count > 1 && !lines[1].isEmpty ? String(lines[1]) : nil
        let adminURL = lines.count > 2 && !lines[2].isEmpty ? String(lines[2]) : nil
        return PidFile(path: path, pid: pid, url: url, adminURL: adminURL)
    }

    /// Why a pid file no server holds is stale: its process is gone, or is something else.
    var staleReason: String {
        ProcessIdentity.isAlive(pid) ? "process \(pid) is not a mishap server" : "process \(pid) is gone"
    }

    /// Checks the pid file at `path`: whether a server holds it (its lock, see `PidFileLock`)
    /// and whether the process the file names is that server. The pid alone is not trusted: a
    /// pid can be reused, and a file can name any process.
    static func check(_ path: String) -> PidFileCheck {
        guard let descriptor = FileDescriptor.open(path, .read) else {
            return FileDescriptor.lastErrorIsNoSuchFile ? .absent : .unreadable(Platform.describeLastError())
        }
        defer { FileDescriptor.close(descriptor) }
        let held = PidFileLock.isHeld(descriptor)
        guard let file = read(descriptor: descriptor, path: path) else { return held == true ? .starting : .stale(nil) }
        guard ProcessIdentity.isAlive(file.pid) else { return held == true ? .heldByAnother(file) : .stale(file) }
        let holdsIt = FileIdentity(descriptor: descriptor).flatMap { ProcessIdentity.holdsOpen(file.pid, $0) }
        switch held {
        case true?:
            // A server holds the lock; the file names it if that process has the file open
            // (where its descriptors can be listed).
            return holdsIt == false ? .heldByAnother(file) : .server(file, locked: true)
        case false?:
            return ProcessIdentity.isUnlockedServer(file.pid, pidFile: path) ? .server(file, locked: false) : .stale(file)
        case nil:
            // No locks on this file system: the process must hold the file open, or be a server of it by its command line.
            if holdsIt == true { return .server(file, locked: false) }
            return ProcessIdentity.isUnlockedServer(file.pid, pidFile: path) ? .server(file, locked: false) : .stale(file)
        }
    }
}

/// What a pid file says once checked.
enum PidFileCheck {
    /// There is no pid file.
    case absent
    /// The pid file cannot be opened, for this reason.
    case unreadable(String)
    /// The server named by the pid file runs: it holds the file's lock (`locked`), or is a
    /// server of an earlier version, which took none, started with this pid file. A locked
    /// server whose file has no URL yet is still starting.
    case server(PidFile, locked: Bool)
    /// A process holds the pid file's lock but the file names none yet: a server starting.
    case starting
    /// A process holds the pid file's lock, but the process the file names is gone or does not
    /// hold the file: something wrote another pid into it.
    case heldByAnother(PidFile)
    /// No server holds the pid file: it names a process that is gone or that is not a Mishap
    /// server (see `staleReason`), or names none (nil).
    case stale(PidFile?)
}

