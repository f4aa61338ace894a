import ArgumentParser
import MishapSupport

/// `mishap stop`: ends a server started with `start`, through its pid file.
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
        let path = FileSystem.absolutePath(pid.pidFile)
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
