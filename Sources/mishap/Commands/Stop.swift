import ArgumentParser
import MishapSupport

/// `mishap stop`: ends a server started with `start`, through its pid file.
struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop a server started with 'start': SIGTERM, wait for it to exit, remove the pid file.",
        discussion: """
            Exits 0 once it has stopped, or when none was running; 1 when it is still running after \
            --timeout, or when the pid file names a live process that is not the mishap server \
            holding it (which is not signalled).
            """
    )

    @OptionGroup var pid: PidFileOption

    @Option(help: ArgumentHelp("How long to wait for the server to exit (requests in flight get its --grace). " + DurationOption.rule, valueName: "duration"))
    var timeout = DurationOption(seconds: 30)

    func validate() throws {
        try timeout.check("--timeout")
    }

    func run() throws {
        let path = FileSystem.absolutePath(pid.pidFile)
        let deadline = ContinuousClock.now + timeout.duration
        var check = PidFile.check(path)
        // Passing states: a server claimed the pid file a moment ago and has not written its pid
        // yet, or one that failed to start is gone while `start` still holds the file.
        while check.isPassing, ContinuousClock.now < deadline {
            Processes.pause(milliseconds: 20)
            check = PidFile.check(path)
        }
        let file: PidFile
        switch check {
        case .absent:
            print("mishap is not running (no pid file at \(path))")
            return
        case .unreadable(let reason):
            printError("mishap: cannot read the pid file \(path): \(reason)")
            throw ExitCode.failure
        case .starting:
            printError("mishap: a server holds the pid file \(path) but has not written its pid within \(timeout.seconds) s; not stopping it")
            throw ExitCode.failure
        case .heldByAnother(let named):
            printError("mishap: a server holds the pid file \(path), but the file names process \(named.pid), which is not that server; not signalling it")
            throw ExitCode.failure
        case .stale(nil):
            PidFileLock.removeStale(path)
            print("mishap is not running (removed the pid file \(path), which named no process)")
            return
        case .stale(let named?):
            let alive = ProcessIdentity.isAlive(named.pid)
            PidFileLock.removeStale(path)
            guard alive else {
                print("mishap is not running (removed a stale pid file: process \(named.pid) is gone)")
                return
            }
            // Signalling it would hit whatever has that pid now.
            printError("mishap: process \(named.pid), named by the pid file \(path), is not a mishap server (no server holds the pid file); not signalling it, and removed the stale pid file")
            throw ExitCode.failure
        case .server(let server, _):
            file = server
        }
        Processes.send(SignalNumber.terminate, to: file.pid)
        while ProcessIdentity.isAlive(file.pid) {
            guard ContinuousClock.now < deadline else {
                printError("mishap: process \(file.pid) is still running \(timeout.seconds) s after SIGTERM")
                throw ExitCode.failure
            }
            Processes.pause(milliseconds: 20)
        }
        // The server removes its pid file as it exits; this one could not (a server killed).
        PidFileLock.removeStale(path)
        print("mishap stopped (pid \(file.pid))")
    }
}

extension PidFileCheck {
    /// A state that resolves by itself in a moment: the lock held, and the file naming no
    /// process yet, or one that is gone.
    var isPassing: Bool {
        switch self {
        case .starting: return true
        case .heldByAnother(let file): return !ProcessIdentity.isAlive(file.pid)
        default: return false
        }
    }
}
