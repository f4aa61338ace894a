import ArgumentParser
import Logging
import MishapEngine
import MishapScenarios
import MishapServer

#if canImport(Glibc)
import Glibc
#endif

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the scenarios until interrupted (SIGINT or SIGTERM).",
        discussion: """
            The first line on standard output says where the server listens, for example \
            'mishap listening on http://127.0.0.1:8080'. A scenario folder with errors is \
            reported as file:line:column messages on standard error, and the server does not start.
            """
    )

    @OptionGroup var scenarioOptions: ScenariosOption

    @Option(help: "The address to bind. Loopback by default; 0.0.0.0 opens Mishap to the network.")
    var host: String = "127.0.0.1"

    @Option(help: "The TCP port; 0 picks a free one.")
    var port: Int = 8080

    @Option(help: "Worker threads, each with its own epoll loop (the default is one per processor).")
    var threads: Int = ServerConfiguration.processorCount

    @Option(name: .customLong("max-body"), help: ArgumentHelp("Largest request body accepted; larger ones get 413.", valueName: "bytes"))
    var maxBody: Int = 10 << 20

    @Option(name: .customLong("max-header-size"), help: ArgumentHelp("Largest header section accepted; larger ones get 431. It also sets each connection's buffer, so memory per connection.", valueName: "bytes"))
    var maxHeaderSize: Int = 8 << 10

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Option(help: "Seeds 'chance', delay ranges and garbage bytes, so a run of requests can be repeated.")
    var seed: UInt64?

    @Option(name: .customLong("session-header"), help: ArgumentHelp("Requests carrying this header keep their own cycle positions, one set per value.", valueName: "name"))
    var sessionHeader: String = EngineOptions().sessionHeader

    @Option(name: .customLong("rule-header"), help: ArgumentHelp("Requests carrying this header are answered by the named rule of their endpoint, whatever its 'when'.", valueName: "name"))
    var ruleHeader: String = EngineOptions().ruleHeader

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        guard maxBody >= 0 else { throw ValidationError("--max-body must not be negative") }
        guard (1 << 10...1 << 20).contains(maxHeaderSize) else { throw ValidationError("--max-header-size must be from 1024 to 1048576 bytes") }
        for (flag, name) in [("--session-header", sessionHeader), ("--rule-header", ruleHeader)] {
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_".contains($0)) }) else {
                throw ValidationError("\(flag) must be a header name (letters, digits, '-' and '_')")
            }
        }
    }

    func run() throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "mishap")

        let scenarios: ScenarioSet
        do {
            scenarios = try ScenarioPrefetch.load(directory: scenarioOptions.scenarios)
        } catch {
            printError(error.description)
            printError("mishap: \(error.diagnostics.count) problem(s) in \(scenarioOptions.scenarios); not serving")
            throw ExitCode.failure
        }

        // Signals are taken synchronously by this thread; libmicrohttpd's threads inherit the mask.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)

        let server = HTTPServer(
            configuration: ServerConfiguration(host: host, port: UInt16(port), threads: threads, maxBodyBytes: maxBody, maxHeaderBytes: maxHeaderSize),
            responder: scenarios.makeEngine(options: EngineOptions(sessionHeader: sessionHeader, ruleHeader: ruleHeader, seed: seed)),
            logger: logger
        )
        do {
            try server.start()
        } catch {
            printError("mishap: \(error)")
            throw ExitCode.failure
        }
        print("mishap listening on \(server.url ?? "?")")
        fflush(nil)
        logger.info("serving \(scenarios.endpoints.count) endpoint(s) from \(scenarios.files.count) file(s) in \(scenarioOptions.scenarios)")

        var received: Int32 = 0
        sigwait(&signals, &received)
        logger.info("received \(received == SIGINT ? "SIGINT" : "SIGTERM"), stopping")
        server.stop()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Writes a line to standard error.
func printError(_ message: String) {
    let line = Array((message + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
