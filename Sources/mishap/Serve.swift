import ArgumentParser
import Logging
import MishapEngine
import MishapScenarios
import MishapHTTP
import MishapService

#if canImport(Glibc)
import Glibc
#endif

/// The options of `serve`, which `start` takes too (and hands to the server it starts).
struct ServeOptions: ParsableArguments {
    @OptionGroup var scenarioOptions: ScenariosOption

    @Option(help: "The address to bind. Loopback by default; 0.0.0.0 opens Mishap to the network.")
    var host: String = "127.0.0.1"

    @Option(help: "The TCP port; 0 picks a free one.")
    var port: Int = 8080

    @Option(name: .customLong("port-file"), help: ArgumentHelp("Write the port listened on to this file once serving (useful with --port 0).", valueName: "path"))
    var portFile: String?

    @Option(help: "Worker threads, each with its own epoll loop (the default is one per processor).")
    var threads: Int = ServerConfiguration.processorCount

    @Option(name: .customLong("max-body"), help: ArgumentHelp("Largest request body accepted; larger ones get 413.", valueName: "bytes"))
    var maxBody: Int = 10 << 20

    @Option(name: .customLong("max-header-size"), help: ArgumentHelp("Largest header section accepted; larger ones get 431. It also sets each connection's buffer, so memory per connection.", valueName: "bytes"))
    var maxHeaderSize: Int = 8 << 10

    @Option(name: .customLong("connection-limit"), help: ArgumentHelp("Most connections open at once; more wait in the listen queue until one closes.", valueName: "count"))
    var connectionLimit: Int = 4096

    @Option(name: .customLong("connection-timeout"), help: ArgumentHelp("Close a connection idle this long (slow senders included); 0 never does. Delayed and hanging answers are not idle.", valueName: "seconds"))
    var connectionTimeout: Int = 30

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical. Request lines are logged at info.")
    var logLevel: Logger.Level = .info

    @Option(name: .customLong("log-format"), help: "text, or json (one object per line).")
    var logFormat: LineLogHandler.Format = .text

    @Option(help: "Seeds 'chance', delay ranges and garbage bytes, so a run of requests can be repeated.")
    var seed: UInt64?

    @Option(name: .customLong("session-header"), help: ArgumentHelp("Requests carrying this header keep their own cycle positions, one set per value.", valueName: "name"))
    var sessionHeader: String = EngineOptions().sessionHeader

    @Option(name: .customLong("rule-header"), help: ArgumentHelp("Requests carrying this header are answered by the named rule of their endpoint, whatever its 'when'.", valueName: "name"))
    var ruleHeader: String = EngineOptions().ruleHeader

    @Option(name: .customLong("journal-size"), help: ArgumentHelp("Requests the journal keeps for /__mishap/requests (the oldest make room); 0 keeps none.", valueName: "count"))
    var journalSize: Int = 1000

    @Option(name: .customLong("max-sessions"), help: ArgumentHelp("Sessions each cycle rule remembers; past that, the least recently seen start over.", valueName: "count"))
    var maxSessions: Int = EngineOptions.defaultMaxSessions

    @Flag(name: .customLong("no-admin"), help: "Turn off the admin API under /__mishap/.")
    var noAdmin = false

    @Option(name: .customLong("admin-token"), help: ArgumentHelp("Require this token on every admin call (Authorization: Bearer TOKEN, or X-Mishap-Admin-Token), and then accept admin calls from other machines too. Read from MISHAP_ADMIN_TOKEN when not given.", valueName: "token"))
    var adminTokenOption: String?

    /// The admin token: the flag, else the environment variable.
    var adminToken: String? {
        adminTokenOption ?? getenv(Self.adminTokenVariable).map { String(cString: $0) }
    }

    static let adminTokenVariable = "MISHAP_ADMIN_TOKEN"

    @Option(help: ArgumentHelp("Pick up edits to the scenarios folder: auto (inotify, else polling), poll, or off. SIGHUP reloads in every case.", valueName: "mode"))
    var watch: WatchMode = .auto

    @Option(help: ArgumentHelp("On SIGTERM or SIGINT, how long requests in flight (delayed ones too) may take to finish.", valueName: "seconds"))
    var grace: Double = 10

    @Option(name: .customLong("pid-file"), help: ArgumentHelp("Write the process id (and, on a second line, the URL) to this file while serving.", valueName: "path"))
    var pidFile: String?

    /// Where `start` learns that the server is up: the URL is written to this descriptor, then it is closed.
    @Option(name: .customLong("ready-fd"), help: .hidden)
    var readyDescriptor: Int32?

    enum WatchMode: String, ExpressibleByArgument, CaseIterable {
        case auto, poll, off
    }

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        guard maxBody >= 0 else { throw ValidationError("--max-body must not be negative") }
        guard (1 << 10...1 << 20).contains(maxHeaderSize) else { throw ValidationError("--max-header-size must be from 1024 to 1048576 bytes") }
        guard (1...1_000_000).contains(connectionLimit) else { throw ValidationError("--connection-limit must be from 1 to 1000000") }
        guard (0...86_400).contains(connectionTimeout) else { throw ValidationError("--connection-timeout must be from 0 to 86400 seconds") }
        guard (1...10_000_000).contains(maxSessions) else { throw ValidationError("--max-sessions must be from 1 to 10000000") }
        if let token = adminToken {
            guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw ValidationError("the admin token (--admin-token or \(Self.adminTokenVariable)) must be printable ASCII with no spaces, and not empty")
            }
        }
        guard journalSize >= 0 else { throw ValidationError("--journal-size must not be negative") }
        guard (0...86_400).contains(grace) else { throw ValidationError("--grace must be from 0 to 86400 seconds") }
        for (flag, name) in [("--session-header", sessionHeader), ("--rule-header", ruleHeader)] {
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_".contains($0)) }) else {
                throw ValidationError("\(flag) must be a header name (letters, digits, '-' and '_')")
            }
        }
    }
}

extension LineLogHandler.Format: ExpressibleByArgument {}

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the scenarios in the foreground until SIGINT or SIGTERM (SIGHUP reloads them).",
        discussion: """
            The first line on standard output says where the server listens, for example \
            'mishap listening on http://127.0.0.1:8080'. Logs, one line per request among them, go \
            to standard error. A scenarios folder with errors is reported as file:line:column \
            messages and the server does not start; once serving, edits to the folder are picked \
            up, and a broken edit is reported while the last good scenarios keep serving.
            """
    )

    @OptionGroup var options: ServeOptions

    func run() throws {
        let options = self.options
        let level = options.logLevel, format = options.logFormat
        LoggingSystem.bootstrap { label in LineLogHandler(label: label, level: level, format: format) }
        let logger = Logger(label: "mishap")
        let directory = options.scenarioOptions.scenarios

        let scenarios: ScenarioSet
        do {
            scenarios = try ScenarioPrefetch.load(directory: directory)
        } catch {
            printError(error.description)
            printError("mishap: \(error.diagnostics.count) problem(s) in \(directory); not serving")
            throw ExitCode.failure
        }

        // Signals are taken synchronously by this thread; every other thread inherits the mask.
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)

        let mishap: MishapInstance
        do {
            mishap = try MishapInstance.start(
                MishapInstance.Configuration(
                    scenarios: .directory(directory),
                    service: ServiceOptions(
                        engine: EngineOptions(sessionHeader: options.sessionHeader, ruleHeader: options.ruleHeader,
                                              seed: options.seed, maxSessions: options.maxSessions),
                        journalSize: options.journalSize, admin: !options.noAdmin, adminToken: options.adminToken),
                    server: ServerConfiguration(
                        host: options.host, port: UInt16(options.port), threads: options.threads,
                        maxBodyBytes: options.maxBody, maxHeaderBytes: options.maxHeaderSize,
                        connectionLimit: raiseDescriptorLimit(for: options.connectionLimit, logger: logger),
                        connectionTimeoutSeconds: options.connectionTimeout),
                    watch: MishapInstance.WatchMode(rawValue: options.watch.rawValue) ?? .auto),
                scenarios: scenarios, logger: logger)
        } catch {
            printError("mishap: \(error)")
            throw ExitCode.failure
        }
        let url = mishap.url
        if !isLoopback(host: options.host) {
            let admin = options.noAdmin ? "the admin API is off"
                : options.adminToken != nil ? "the admin API answers them with the admin token"
                : "the admin API still answers this machine only"
            logger.warning("listening on \(options.host): other machines can reach this server (\(admin))")
        }

        if let pidFile = options.pidFile {
            if !writeFile(pidFile, "\(getpid())\n\(url)\n") { logger.warning("cannot write the pid file \(pidFile)") }
        }
        if let portFile = options.portFile, !writeFile(portFile, "\(mishap.port)\n") {
            printError("mishap: cannot write the port file \(portFile)")
            mishap.stop()
            throw ExitCode.failure
        }
        print("mishap listening on \(url)")
        fflush(nil)
        logger.info("serving \(scenarios.endpoints.count) endpoint(s) from \(scenarios.files.count) file(s) in \(directory)\(mishap.watcher.map { ", watching it (\($0.mechanism))" } ?? "")")
        if let descriptor = options.readyDescriptor {
            _ = writeAll(descriptor, url + "\n")
            close(descriptor)
        }

        var received: Int32 = 0
        while true {
            sigwait(&signals, &received)
            if received == SIGHUP {
                logger.info("received SIGHUP, reloading")
                _ = try? mishap.reload()
                continue
            }
            break
        }
        let name = received == SIGINT ? "SIGINT" : "SIGTERM"
        let inFlight = mishap.requestsInFlight
        logger.info("received \(name), stopping\(inFlight > 0 ? "; letting \(inFlight) request(s) in flight finish (up to \(options.grace) s)" : "")")
        let cut = mishap.stop(grace: .milliseconds(Int(options.grace * 1000)))
        if cut > 0 { logger.warning("\(cut) request(s) still in flight after the grace period were cut short") }
        if let pidFile = options.pidFile { removePidFile(pidFile, ifItIs: getpid()) }
        logger.info("stopped")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Writes a line to standard error.
func printError(_ message: String) {
    _ = writeAll(2, message + "\n")
}

/// Writes all of `text` to a descriptor; false on an error.
func writeAll(_ descriptor: Int32, _ text: String) -> Bool {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 && errno == EINTR { continue }
        if written <= 0 { return false }
        offset += written
    }
    return true
}

/// Replaces a file's contents (through a temporary file and a rename, so readers never see half).
func writeFile(_ path: String, _ text: String) -> Bool {
    let temporary = path + ".tmp\(getpid())"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { return false }
    let written = writeAll(descriptor, text)
    close(descriptor)
    guard written, rename(temporary, path) == 0 else {
        unlink(temporary)
        return false
    }
    return true
}

/// Raises the soft limit on open descriptors toward the hard one so `wanted` connections fit,
/// and returns the connection limit that does fit (with a warning when it is lower).
func raiseDescriptorLimit(for wanted: Int, logger: Logger) -> Int {
    // Besides connections: the listener, epoll and wake-up descriptors per thread, the
    // scenario watcher, logs, and files read on reload.
    let reserve = 64
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return wanted }
    let needed = rlim_t(wanted + reserve)
    if limit.rlim_cur < needed {
        var raised = limit
        raised.rlim_cur = limit.rlim_max == rlim_t.max ? needed : min(needed, limit.rlim_max)
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
    }
    let fitting = limit.rlim_cur == rlim_t.max ? wanted : min(wanted, max(1, Int(clamping: limit.rlim_cur) - reserve))
    if fitting < wanted {
        logger.warning("--connection-limit \(wanted) does not fit the open-file limit (\(limit.rlim_cur)); using \(fitting)")
    }
    return fitting
}

/// Whether a --host value only accepts connections from this machine.
func isLoopback(host: String) -> Bool {
    host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
}
