import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

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
        guard let text = readText(path) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.first, let pid = pid_t(first.trimmingSpaces), pid > 0 else { return nil }
        let url = lines.count > 1 && !lines[1].isEmpty ? String(lines[1]) : nil
        return PidFile(path: path, pid: pid, url: url)
    }

    /// True when the process exists and is a `mishap` (a pid reused by something else is not).
    var isRunning: Bool {
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let commandLine = readText("/proc/\(pid)/cmdline") else { return true }
        let program = commandLine.split(separator: "\0", maxSplits: 1).first.map(String.init) ?? ""
        // A zombie (exited, not yet reaped) has an empty command line.
        guard !program.isEmpty else { return false }
        return program.split(separator: "/").last?.hasPrefix("mishap") ?? false
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        return text
    }
}

/// A small file's text, or nil.
func readText(_ path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(descriptor, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        bytes += buffer[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Removes the pid file if it still names `pid` (a newer server may have replaced it).
func removePidFile(_ path: String, ifItIs pid: pid_t) {
    if PidFile.read(path)?.pid == pid { unlink(path) }
}

/// The absolute form of a path (relative ones are taken from the current folder).
func absolutePath(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return path }
    let folder = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return folder + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
}

/// Marks every open descriptor above standard error close-on-exec, so a program started next
/// gets only the descriptors its spawn actions give it.
func markInheritedDescriptorsCloseOnExec() {
    guard let folder = opendir("/proc/self/fd") else { return }
    var descriptors: [Int32] = []
    while let entry = readdir(folder) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        if let descriptor = Int32(name), descriptor > 2 { descriptors.append(descriptor) }
    }
    closedir(folder)
    for descriptor in descriptors {
        let flags = fcntl(descriptor, F_GETFD)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
    }
}

struct Start: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start serving in the background; returns once the server accepts connections.",
        discussion: """
            Prints the URL and writes the pid file. Logs go to --log-file. When the server cannot \
            start (a port in use, errors in the scenarios), exits 1 with the reason. Takes every \
            option of 'serve'.
            """
    )

    @OptionGroup var options: ServeOptions

    @Option(name: .customLong("log-file"), help: ArgumentHelp("Where the server's output and logs go (appended).", valueName: "path"))
    var logFile: String = "./mishap.log"

    @Option(help: ArgumentHelp("How long to wait for the server to accept connections.", valueName: "seconds"))
    var timeout: Double = 30

    func validate() throws {
        guard (0.1...86_400).contains(timeout) else { throw ValidationError("--timeout must be from 0.1 to 86400 seconds") }
    }

    func run() throws {
        let pidPath = absolutePath(options.pidFile ?? "./mishap.pid")
        let logPath = absolutePath(logFile)
        if let existing = PidFile.read(pidPath) {
            if existing.isRunning {
                printError("mishap: already running (pid \(existing.pid)\(existing.url.map { ", \($0)" } ?? "")); pid file \(pidPath)")
                throw ExitCode.failure
            }
            print("mishap: replacing a stale pid file (process \(existing.pid) is gone)")
            unlink(pidPath)
        }

        let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard log >= 0 else {
            printError("mishap: cannot open the log file \(logPath): \(String(cString: strerror(errno)))")
            throw ExitCode.failure
        }
        defer { close(log) }
        let logStart = lseek(log, 0, SEEK_END)

        var ready: [Int32] = [0, 0]
        guard pipe(&ready) == 0, fcntl(ready[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(ready[1], F_SETFD, FD_CLOEXEC) == 0 else {
            printError("mishap: cannot create a pipe")
            throw ExitCode.failure
        }
        // The child gets the pipe's write end as descriptor 3, its output in the log file,
        // and a session of its own (so the terminal's signals do not reach it).
        let arguments = ["mishap", "serve"] + serveArguments() + ["--pid-file", pidPath, "--ready-fd", "3"]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, log, 1)
        posix_spawn_file_actions_adddup2(&actions, log, 2)
        posix_spawn_file_actions_adddup2(&actions, ready[1], 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, 0x80)  // POSIX_SPAWN_SETSID (glibc; hidden from Swift without _GNU_SOURCE)

        // Descriptors inherited from whoever ran `start` (pipes it waits on for EOF, sockets)
        // must not stay open for the server's lifetime.
        markInheritedDescriptorsCloseOnExec()
        var child: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawn(&child, "/proc/self/exe", &actions, &attributes, argv, environ)
        close(ready[1])
        defer { close(ready[0]) }
        guard spawned == 0 else {
            printError("mishap: cannot start the server: \(String(cString: strerror(spawned)))")
            throw ExitCode.failure
        }

        if let url = readLine(from: ready[0], timeout: timeout) {
            print("mishap running at \(url) (pid \(child)); pid file \(pidPath), logs in \(logPath)")
            return
        }
        // No URL: the server failed (its reasons are in the log) or is too slow.
        var status: Int32 = 0
        let exited = waitpid(child, &status, WNOHANG) == child || (usleep(200_000) == 0 && waitpid(child, &status, WNOHANG) == child)
        let output = (readText(logPath) ?? "").utf8.dropFirst(Int(max(0, logStart)))
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").suffix(20)
        if exited {
            printError("mishap: the server did not start (exit status \(status >> 8)):")
        } else {
            kill(child, SIGTERM)
            printError("mishap: the server did not accept connections within \(timeout) s; stopped it:")
        }
        for line in lines { printError("  \(line)") }
        throw ExitCode.failure
    }

    /// The arguments given to `start`, minus the ones that only `start` reads.
    private func serveArguments() -> [String] {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if let index = arguments.firstIndex(of: "start") { arguments.removeFirst(index + 1) }
        var result: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--log-file" || argument == "--timeout" || argument == "--pid-file" || argument == "--ready-fd" {
                index += 2
                continue
            }
            if ["--log-file=", "--timeout=", "--pid-file=", "--ready-fd="].contains(where: { argument.hasPrefix($0) }) {
                index += 1
                continue
            }
            result.append(argument)
            index += 1
        }
        return result
    }

    /// One line from `descriptor`, or nil at its end or after `timeout` seconds.
    private func readLine(from descriptor: Int32, timeout: Double) -> String? {
        var bytes: [UInt8] = []
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while ContinuousClock.now < deadline {
            var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            let left = deadline - ContinuousClock.now
            let ready = poll(&fds, 1, Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { return nil }
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return nil }
            bytes += buffer[..<count]
            if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                return String(decoding: bytes[..<newline], as: UTF8.self)
            }
        }
        return nil
    }
}

struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop a server started with 'start': SIGTERM, wait for it to exit, remove the pid file.",
        discussion: "Exits 0 once it has stopped, or when none was running; 1 when it is still running after --timeout."
    )

    @OptionGroup var pid: PidFileOption

    @Option(help: ArgumentHelp("How long to wait for the server to exit (requests in flight get its --grace).", valueName: "seconds"))
    var timeout: Double = 30

    func validate() throws {
        guard (0...86_400).contains(timeout) else { throw ValidationError("--timeout must be from 0 to 86400 seconds") }
    }

    func run() throws {
        let path = absolutePath(pid.pidFile)
        guard let file = PidFile.read(path) else {
            print("mishap is not running (no pid file at \(path))")
            return
        }
        guard file.isRunning else {
            unlink(path)
            print("mishap is not running (removed a stale pid file: process \(file.pid) is gone)")
            return
        }
        kill(file.pid, SIGTERM)
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while file.isRunning {
            guard ContinuousClock.now < deadline else {
                printError("mishap: process \(file.pid) is still running \(timeout) s after SIGTERM")
                throw ExitCode.failure
            }
            usleep(20_000)
        }
        unlink(path)
        print("mishap stopped (pid \(file.pid))")
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say whether a server started with 'start' is running, and where.",
        discussion: """
            Exits 0 when it is running, 1 when it is not. With --url, asks the server at that \
            address instead (GET /__mishap/health, 200 expected), with no pid file: a health \
            check for containers and scripts.
            """
    )

    @OptionGroup var pid: PidFileOption

    @Option(help: ArgumentHelp("Check the server at this URL through its admin API instead of the pid file.", valueName: "url"))
    var url: String?

    @Option(name: .customLong("admin-token"), help: ArgumentHelp("The server's admin token, for --url (read from MISHAP_ADMIN_TOKEN when not given).", valueName: "token"))
    var adminToken: String?

    func validate() throws {
        if let adminToken, adminToken.isEmpty || !adminToken.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw ValidationError("--admin-token must be printable ASCII with no spaces, and not empty")
        }
    }

    func run() throws {
        if let url {
            let token = adminToken ?? getenv(ServeOptions.adminTokenVariable).map { String(cString: $0) }
            switch healthCheck(url: url, token: token) {
            case .success:
                print("mishap is serving at \(url)")
                return
            case .failure(let failure):
                print("mishap is not serving at \(url): \(failure)")
                throw ExitCode.failure
            }
        }
        let path = absolutePath(pid.pidFile)
        guard let file = PidFile.read(path) else {
            print("mishap is not running (no pid file at \(path))")
            throw ExitCode.failure
        }
        guard file.isRunning else {
            print("mishap is not running (stale pid file \(path): process \(file.pid) is gone)")
            throw ExitCode.failure
        }
        print("mishap is running at \(file.url ?? "an unknown address") (pid \(file.pid))")
    }
}
