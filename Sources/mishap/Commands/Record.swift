import ArgumentParser
import Logging
import MishapEngine
import MishapHTTP
import MishapRecording
import MishapService
import MishapSupport
import MishapUpstream

/// `mishap record`: Mishap in front of a real server with no scenarios, so every request goes
/// through, and the server's answers written down as scenario files (`MishapRecording`).
struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Pass every request on to a real server and write its answers down as scenario files.",
        discussion: """
            Serves in the foreground until SIGINT or SIGTERM, every request going to --upstream \
            and its answer back. The first answer to each distinct request (method, path, query) \
            becomes a rule of its endpoint's file in --out, written within a tenth of a second (and \
            everything left when it stops): one file per endpoint, \
            bodies that are large or not text in --out/files/. Set-Cookie and other credentials are \
            left out unless --keep-header names them; request headers are never written. The \
            folder validates with 'mishap validate' and, served with 'mishap serve --scenarios', \
            answers the recorded requests as the server did. The first line on standard output \
            says where it listens; the last, how much was recorded.
            """
    )

    @OptionGroup(title: "Upstream") var upstreamOptions: UpstreamServeOptions

    @Option(name: .customLong("out"), help: ArgumentHelp("The folder to write the scenario files to: new or empty, unless --overwrite.", valueName: "dir"))
    var out: String

    @Flag(name: .customLong("overwrite"), help: "Record into a folder that is not empty, replacing the files of the same names (other files stay).")
    var overwrite = false

    @Option(name: .customLong("keep-header"), help: ArgumentHelp("Keep this answer header, which is left out as a secret otherwise (Set-Cookie, Authorization); repeatable.", valueName: "name"))
    var keepHeaders: [String] = []

    @Option(help: "The address to bind. Loopback by default; 0.0.0.0 opens Mishap to the network.")
    var host: String = "127.0.0.1"

    @Option(help: "The TCP port; 0 picks a free one.")
    var port: Int = 8080

    @Option(name: .customLong("port-file"), help: ArgumentHelp("Write the port listened on to this file once serving (useful with --port 0).", valueName: "path"))
    var portFile: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical. Each request recorded is logged at info.")
    var logLevel: Logger.Level = .info

    @Option(name: .customLong("log-format"), help: "text, or json (one object per line).")
    var logFormat: LineLogHandler.Format = .text

    @Option(help: ArgumentHelp("On SIGTERM or SIGINT, how long requests in flight may take to finish. " + DurationOption.rule, valueName: "duration"))
    var grace = DurationOption(seconds: 10)

    func validate() throws {
        guard let url = upstreamOptions.url else {
            throw ValidationError("--upstream is required: the server whose answers are recorded")
        }
        if ProxyTarget.problem(with: url) != nil { return } // said by the upstream options
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        if let problem = upstreamOptions.selfProblem(host: host, ports: [port]) { throw ValidationError(problem) }
        guard !out.isEmpty else { throw ValidationError("--out must name a folder") }
        try grace.check("--grace")
        for name in keepHeaders {
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "!#$%&'*+-.^_`|~".contains($0)) }) else {
                throw ValidationError("--keep-header '\(name)' is not a header name")
            }
            guard HeaderSelection.secretHeaders.contains(name.lowercased()) else {
                let kept = HeaderSelection.serverHeaders.contains(name.lowercased())
                    ? "'\(name)' is written by the server and never recorded"
                    : "'\(name)' is kept already"
                throw ValidationError("--keep-header keeps a header left out as a secret (\(HeaderSelection.secretHeaders.sorted().joined(separator: ", "))); \(kept)")
            }
        }
    }

    func run() throws {
        let level = logLevel, format = logFormat
        LoggingSystem.bootstrap { label in LineLogHandler(label: label, level: level, format: format) }
        errorLineFormat = format
        let logger = Logger(label: "mishap")
        guard let upstream = upstreamOptions.options, let upstreamURL = upstream.url else { throw ExitCode.validationFailure }

        if let problem = Self.folderProblem(out, overwrite: overwrite) {
            printError("mishap record: \(problem)")
            throw ExitCode.failure
        }
        if let problem = FileSystem.makeFolders(out) {
            printError("mishap record: \(problem)")
            throw ExitCode.failure
        }
        // Signals are taken synchronously by this thread; every other thread inherits the mask.
        var signals = SignalSet(blocking: [SignalNumber.interrupt, SignalNumber.terminate, SignalNumber.hangUp])
        if let problem = UpstreamClient.loadLibrary() {
            printError("mishap: --upstream: \(problem)")
            throw ExitCode.failure
        }

        let recorder = Recorder(writer: ScenarioWriter(directory: out, upstream: upstreamURL),
                                headers: HeaderSelection(keeping: keepHeaders)) { event in
            switch event.level {
            case .debug: logger.debug("\(event.message)")
            case .info: logger.info("\(event.message)")
            case .warning: logger.warning("\(event.message)")
            case .error: logger.error("\(event.message)")
            }
        }
        let mishap: MishapInstance
        do {
            mishap = try MishapInstance.start(
                MishapInstance.Configuration(
                    // No scenarios: every request goes to the upstream.
                    scenarios: .yaml("endpoints: []", name: "(recording: no scenarios)"),
                    service: ServiceOptions(upstream: upstream, upstreamAnswers: recorder.record),
                    server: ServerConfiguration(host: host, port: UInt16(port), threads: Platform.processorCount),
                    watch: .off),
                logger: logger)
        } catch {
            printError("mishap: \(error)")
            throw ExitCode.failure
        }
        if let portFile, !FileSystem.replaceContents(of: portFile, with: "\(mishap.port)\n") {
            printError("mishap: cannot write the port file \(portFile)")
            mishap.stop()
            throw ExitCode.failure
        }
        printLine("mishap listening on \(mishap.url)", metadata: ["url": .string(mishap.url)])
        logger.info("recording the answers of \(upstreamURL) into \(out)")

        var received: Int32
        repeat { received = signals.wait() } while received == SignalNumber.hangUp
        let name = received == SignalNumber.interrupt ? "SIGINT" : "SIGTERM"
        logger.info("received \(name), stopping")
        let cut = mishap.stop(grace: grace.duration)
        if cut > 0 { logger.warning("\(cut) request(s) still in flight after the grace period were cut short") }
        // The files of the last rules recorded, written before the summary says they are.
        recorder.flush()
        let summary = recorder.summary
        let repeats = summary.repeats > 0 ? " (\(summary.repeats) repeat(s) not recorded again)" : ""
        printLine("recorded \(summary.requests) request(s) in \(summary.files) file(s) in \(out)\(repeats)",
                  metadata: ["requests": .stringConvertible(summary.requests), "files": .stringConvertible(summary.files), "out": .string(out)])
    }

    /// Why `folder` cannot be recorded into: it is a file, or a folder that is not empty
    /// (unless `overwrite`); nil when it is missing, empty, or may be overwritten.
    static func folderProblem(_ folder: String, overwrite: Bool) -> String? {
        guard FileSystem.permissions(folder) != nil else { return nil }
        guard FileSystem.isDirectory(folder) else { return "--out \(folder) is not a folder" }
        let entries = FileSystem.entries(of: folder)
        guard !entries.isEmpty, !overwrite else { return nil }
        return "--out \(folder) is not empty (it holds \(entries.count) entr\(entries.count == 1 ? "y" : "ies")); record into a new or empty folder, or pass --overwrite to replace the files of the same names"
    }

    /// A line on standard output (as a JSON object under `--log-format json`), flushed.
    private func printLine(_ line: String, metadata: Logger.Metadata) {
        if logFormat == .json {
            let stdout = Logger(label: "mishap") { label in LineLogHandler(label: label, level: .trace, format: .json, descriptor: 1) }
            stdout.notice("\(line)", metadata: metadata)
        } else {
            print(line)
        }
        Processes.flushStandardStreams()
    }
}
