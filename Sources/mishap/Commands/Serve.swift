import ArgumentParser
import Logging
import MishapEngine
import MishapScenarios
import MishapHTTP
import MishapService
import MishapSupport
import MishapTLS
import MishapUpstream

/// `mishap serve`, the default command: the server in the foreground.
struct Serve: ParsableCommand {
    /// Named with `mishap` as its super-command: `serve`'s arguments are parsed by `Serve`
    /// alone first (`MishapCommand.parseServeDirectly`), and a command parsed as a root checks
    /// whether it was asked for a completion script by parsing two commands of the library's
    /// own (about 5 million instructions at every start) unless it has a super-command. Asked
    /// for one, `Serve` refuses the flag and the root parses it as before. Parsed from the root,
    /// `mishap` is the root, and this name is not read.
    static let configuration = CommandConfiguration(
        commandName: "serve",
        _superCommandName: "mishap",
        abstract: "Serve the scenarios in the foreground until SIGINT or SIGTERM (SIGHUP reloads them).",
        discussion: """
            The first line on standard output says where the server listens, for example \
            'mishap listening on http://127.0.0.1:8080'. Logs, one line per request among them, go \
            to standard error. A scenarios folder with errors is reported as file:line:column \
            messages and the server does not start; once serving, edits to the folder are picked \
            up, and a broken edit is reported while the last good scenarios keep serving. \
            SIGINT and SIGTERM stop it (requests in flight get --grace), and it exits 0. \
            'mishap start' runs the same server in the background.
            """
    )

    @OptionGroup var options: ServeOptions

    /// How long after serving starts the memory only starting used goes back to the system.
    static let giveBackAfterMilliseconds = 1000

    func run() throws {
        let options = self.options
        let level = options.logLevel, format = options.logFormat
        LoggingSystem.bootstrap { label in LineLogHandler(label: label, level: level, format: format) }
        errorLineFormat = format
        let logger = Logger(label: "mishap")
        let directory = options.scenarioOptions.scenarios
        // Claimed first: with a server already holding it, or where it cannot be written, this one does not start.
        let pidFile = try PidFileLock.forServe(options, logger: logger)
        defer { pidFile?.remove() }

        let scenarios: ScenarioSet
        do {
            scenarios = try ScenarioPrefetch.load(directory: directory)
        } catch {
            if format == .json {
                printError("\(error.diagnostics.count) problem(s) in \(directory); not serving", metadata: error.logMetadata)
            } else {
                printError(error.description)
                printError("mishap: \(error.diagnostics.count) problem(s) in \(directory); not serving")
            }
            throw ExitCode.failure
        }

        // Signals are taken synchronously by this thread; every other thread inherits the mask.
        var signals = SignalSet(blocking: [SignalNumber.interrupt, SignalNumber.terminate, SignalNumber.hangUp])

        if options.upstreamOptions.url != nil, let problem = UpstreamClient.loadLibrary() {
            printError("mishap: --upstream: \(problem)")
            throw ExitCode.failure
        }

        let mishap: MishapInstance
        do {
            mishap = try MishapInstance.start(
                MishapInstance.Configuration(
                    scenarios: .directory(directory),
                    service: options.withAdminPolicy(ServiceOptions(
                        engine: EngineOptions(sessionHeader: options.sessionHeader, ruleHeader: options.ruleHeader,
                                              seed: options.seed, maxSessions: options.maxSessions),
                        journalSize: options.journalSize, admin: !options.noAdmin, adminToken: options.adminToken,
                        cors: options.corsPolicy, sessionPrefix: options.sessionPrefixOption,
                        maxRuntimeRules: options.maxRuntimeRules, maxRuntimeRulesPerSession: options.maxRuntimeRulesPerSession,
                        maxRuntimeRuleBytes: options.maxRuntimeRuleBytes,
                        upstream: options.upstreamOptions.options)),
                    server: ServerConfiguration(
                        host: options.host, port: UInt16(options.port.number ?? 0), threads: options.threads,
                        maxBodyBytes: options.maxBody, maxHeaderBytes: options.maxHeaderSize,
                        connectionLimit: raiseDescriptorLimit(for: options.connectionLimit, logger: logger),
                        connectionTimeoutSeconds: options.connectionTimeout.milliseconds / 1000, eventLoop: options.eventLoop,
                        headTimeoutSeconds: options.headTimeout.milliseconds / 1000),
                    watch: options.watch, tlsSetup: options.tlsOptions.setup(replacingPlainHTTP: options.port == .off),
                    watchSettle: options.watchSettle.duration, adminPort: options.noAdmin ? nil : options.adminPort.map { UInt16($0) }),
                scenarios: scenarios, logger: logger)
        } catch {
            printError("mishap: \(error)")
            throw ExitCode.failure
        }
        let url = mishap.url
        if options.noAdmin, options.adminPort != nil {
            logger.warning("--admin-port is not opened: --no-admin turns the admin API off, and the serving port cannot go down")
        }
        if !MishapInstance.isLoopback(host: options.host) {
            let admin = options.noAdmin ? "the admin API is off"
                : options.adminToken != nil ? "the admin API answers them with the admin token"
                : "the admin API still answers this machine only"
            logger.warning("listening on \(options.host): other machines can reach this server (\(admin))")
        }

        if let pidFile, !pidFile.write(pid: Processes.current, url: url, adminURL: mishap.adminURL) {
            printError("mishap: cannot write the pid file \(pidFile.path): \(Platform.describeLastError())")
            mishap.stop()
            throw ExitCode.failure
        }
        if let portFile = options.portFile, !FileSystem.replaceContents(of: portFile, with: "\(mishap.port)\n") {
            printError("mishap: cannot write the port file \(portFile)")
            mishap.stop()
            throw ExitCode.failure
        }
        // The first line on standard output says where plain HTTP is served (tools read it);
        // HTTPS and the TLS failure catalogue follow, a line each.
        var lines: [(String, Logger.Metadata)] = [("mishap listening on \(url)", ["url": .string(url)])]
        if let adminURL = mishap.adminURL {
            lines.append(("mishap admin API on \(adminURL)/__mishap/", ["adminURL": .string(adminURL)]))
        }
        if let listing = mishap.tls {
            if listing.url == url {
                // --port off: the first line is the HTTPS one.
                lines[0] = ("mishap listening on \(url) (pin sha256/\(listing.pin))", ["url": .string(url), "pin": .string("sha256/" + listing.pin)])
            } else {
                lines.append(("mishap listening on \(listing.url) (pin sha256/\(listing.pin))",
                              ["url": .string(listing.url), "pin": .string("sha256/" + listing.pin)]))
            }
            for failure in listing.failures {
                lines.append(("mishap TLS failure \(failure.failure.rawValue) at \(failure.url): \(failure.failure.summary)",
                              ["failure": .string(failure.failure.rawValue), "url": .string(failure.url)]))
            }
        }
        if format == .json {
            let stdout = Logger(label: "mishap") { label in LineLogHandler(label: label, level: .trace, format: .json, descriptor: 1) }
            for (line, metadata) in lines { stdout.notice("\(line)", metadata: metadata) }
        } else {
            // Written straight to the descriptor: `print` looks up, at run time, which printing
            // protocols a String conforms to, about 0.7 million instructions the first time.
            var text = ""
            for (line, _) in lines { text += line + "\n" }
            Processes.flushStandardStreams()
            _ = FileDescriptor.writeAll(1, text)
        }
        Processes.flushStandardStreams()
        logger.info("serving \(scenarios.endpoints.count) endpoint(s) from \(scenarios.files.count) file(s) in \(directory) (\(mishap.server.eventLoop.rawValue) event loop)\(mishap.watcher.map { ", watching it (\($0.mechanism.rawValue))" } ?? "")")
        if let descriptor = options.readyDescriptor {
            _ = FileDescriptor.writeAll(descriptor, url + "\n")
            FileDescriptor.close(descriptor)
        }

        // A second after serving starts (unless a signal comes first), what starting used and
        // serving does not goes back to the system: done at once, it competed with the first
        // requests for the processor.
        var givenBack = false
        var received: Int32
        while true {
            if givenBack {
                received = signals.wait()
            } else if let signal = signals.wait(milliseconds: Self.giveBackAfterMilliseconds) {
                received = signal
            } else {
                // What loading built and dropped (the YAML trees). Done here, in the server's
                // own process, not by MishapInstance: a test process starting servers by the
                // hundred must not trim its whole heap (and hold malloc's locks) each time.
                FreedMemory.returnToSystem()
                // And the pages of code and read-only data only starting used (StartupPages).
                let released = StartupPages.release()
                logger.debug("gave back \(released) KiB of pages only starting used")
                givenBack = true
                continue
            }
            if received == SignalNumber.hangUp {
                logger.info("received SIGHUP, reloading")
                _ = try? mishap.reload()
                continue
            }
            break
        }
        let name = received == SignalNumber.interrupt ? "SIGINT" : "SIGTERM"
        let inFlight = mishap.requestsInFlight
        logger.info("received \(name), stopping\(inFlight > 0 ? "; letting \(inFlight) request(s) in flight finish (up to \(options.grace.seconds) s)" : "")")
        let cut = mishap.stop(grace: options.grace.duration)
        if cut > 0 { logger.warning("\(cut) request(s) still in flight after the grace period were cut short") }
        logger.info("stopped")
    }
}
