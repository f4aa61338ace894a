import ArgumentParser
import MishapSupport

/// `mishap start`: `serve` in the background, in a session of its own, once it accepts connections.
struct Start: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start serving in the background; returns once the server accepts connections.",
        discussion: """
            Prints the URL and writes the pid file (--pid-file, else $MISHAP_PID_FILE, else \
            ./mishap.pid). Logs go to --log-file. When the server cannot start (a port in use, \
            errors in the scenarios, a pid file that cannot be written), exits 1 with the \
            server's own reason, and no server is left running; a second start with the same pid \
            file exits 1 saying it is already running. A pid file no server holds (after a \
            crash or a reboot) is taken over. Takes every option of 'serve'.
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

        guard let log = FileDescriptor.open(logPath, .appendCreating) else {
            printError("mishap: cannot open the log file \(logPath): \(Platform.describeLastError())")
            throw ExitCode.failure
        }
        defer { FileDescriptor.close(log) }
        let logStart = FileDescriptor.endOffset(log)

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
        let passing = [ready.write, pidFile.descriptor].map { FileDescriptor.duplicate($0, atLeast: 10) ?? -1 }
        let spawned = passing.contains { $0 < 0 } ? nil
            : Spawn.detached(arguments: ["mishap", "serve"] + serve.arguments, output: log, passing: passing)
        for descriptor in passing where descriptor >= 0 { FileDescriptor.close(descriptor) }
        FileDescriptor.close(ready.write)
        defer { FileDescriptor.close(ready.read) }
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
        var status = Processes.waitStatusIfExited(child)
        if status == nil {
            Processes.pause(milliseconds: 200)
            status = Processes.waitStatusIfExited(child)
        }
        let output = (FileSystem.readText(logPath) ?? "").utf8.dropFirst(Int(max(0, logStart)))
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").suffix(20)
        if let status {
            printError("mishap: the server did not start (exit status \(status >> 8)):")
        } else {
            Processes.send(SignalNumber.terminate, to: child)
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
            let left = deadline - ContinuousClock.now
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            // Nothing ready: the time is up (the loop ends) or a signal came first (it waits on).
            guard let ready = Socket.waitForReading([descriptor], timeoutMilliseconds: milliseconds) else { return nil }
            guard ready[0] else { continue }
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = FileDescriptor.readSome(descriptor, into: &buffer)
            if count <= 0 { return nil }
            bytes += buffer[..<count]
            if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                return String(decoding: bytes[..<newline], as: UTF8.self)
            }
        }
        return nil
    }
}
