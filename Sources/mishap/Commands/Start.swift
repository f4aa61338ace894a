import ArgumentParser
import MishapSupport

/// `mishap start`: `serve` in the background, in a session of its own, once it accepts connections.
struct Start: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
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

    @Option(help: ArgumentHelp("How long to wait for the server to accept connections. " + DurationOption.rule, valueName: "duration"))
    var timeout = DurationOption(seconds: 30)

    func validate() throws {
        try timeout.check("--timeout", lowest: 100)
    }

    func run() throws {
        let pidPath = FileSystem.absolutePath(options.pidFile ?? PidFileOption.defaultPath)
        let logPath = FileSystem.absolutePath(logFile)
        // The pid file is claimed before the server is started: of two starts at once with the
        // same pid file, one claims it and the other exits here, with no server of its own.
        let pidFile: PidFileLock
        switch PidFileLock.claim(pidPath) {
        case .failure(let failure):
            printError(failure.message(pidPath))
            throw ExitCode.failure
        case .success(let claim):
            if let stale = claim.replaced { print("mishap: replacing a stale pid file (\(stale.staleReason))") }
            pidFile = claim.lock
        }
        // Until the server serves, every way out removes the pid file claimed here.
        var serving = false
        defer { if !serving { pidFile.remove() } }

        let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard log >= 0 else {
            printError("mishap: cannot open the log file \(logPath): \(Platform.describe(errno: errno))")
            throw ExitCode.failure
        }
        defer { close(log) }
        let logStart = lseek(log, 0, SEEK_END)

        guard let ready = FileDescriptor.makePipe() else {
            printError("mishap: cannot create a pipe")
            throw ExitCode.failure
        }
        // The child gets the pipe's write end as descriptor 3, the claimed pid file (its lock
        // with it) as descriptor 4, its output in the log file, and a session of its own. It is
        // given every option of `serve` as parsed here, with the pid file and descriptor 3
        // (serve takes the descriptor after --ready-fd as its pid file's).
        var serve = options
        serve.pidFile = pidPath
        serve.readyDescriptor = 3
        // Renumbered above 4 first, so that giving the child descriptor 3 cannot overwrite
        // one that is still to become 4 (the pid file, opened first, may well be 3 here).
        let passing = [ready.write, pidFile.descriptor].map { fcntl($0, F_DUPFD_CLOEXEC, 10) }
        let spawned = passing.contains { $0 < 0 } ? nil
            : Spawn.detached(arguments: ["mishap", "serve"] + serve.arguments, output: log, passing: passing)
        for descriptor in passing where descriptor >= 0 { close(descriptor) }
        close(ready.write)
        defer { close(ready.read) }
        guard case .success(let child) = spawned else {
            if case .failure(let error) = spawned { printError("mishap: cannot start the server: \(error)") }
            if spawned == nil { printError("mishap: cannot start the server: no descriptors to hand it") }
            throw ExitCode.failure
        }

        if let url = readLine(from: ready.read, timeout: timeout.seconds) {
            serving = true
            print("mishap running at \(url) (pid \(child)); pid file \(pidPath), logs in \(logPath)")
            return
        }
        // No URL: the server failed (its reasons are in the log) or is too slow.
        var status: Int32 = 0
        let exited = waitpid(child, &status, WNOHANG) == child || (usleep(200_000) == 0 && waitpid(child, &status, WNOHANG) == child)
        let output = (FileSystem.readText(logPath) ?? "").utf8.dropFirst(Int(max(0, logStart)))
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").suffix(20)
        if exited {
            printError("mishap: the server did not start (exit status \(status >> 8)):")
        } else {
            kill(child, SIGTERM)
            printError("mishap: the server did not accept connections within \(timeout.seconds) s; stopped it:")
        }
        for line in lines { printError("  \(line)") }
        throw ExitCode.failure
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
