import ArgumentParser
import MishapSupport

/// `mishap sweep`: a command (an app's test, a client) run once per failure rule of an
/// endpoint, each run in a session of its own with that rule forced, and judged: its exit
/// status, its requests, and the server's verdict on them.
struct Sweep: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Run a command once per failure rule of an endpoint, each in its own session with that rule forced, and judge each run.",
        discussion: """
            'mishap sweep --endpoint "GET /isUserNameAvailable" -- python3 client.py' lists the \
            endpoint's rules (GET /__mishap/scenarios) and, for each (or those of --rules), \
            forces it for a new session (POST /__mishap/force, no limit), runs the command with \
            MISHAP_URL (the server's URL with /__session/ID in its path) and MISHAP_SESSION in \
            its environment, then counts the session's requests, asks for the verdict (GET \
            /__mishap/verdict) and resets the session. The command runs with no shell, its \
            standard input from /dev/null and its output passed through as it runs (to \
            standard error with --json); one still running after --timeout is sent SIGTERM, \
            then SIGKILL 2 s later, with every process it started, and reported as timed out. \
            Prints a table, a row per rule: the command's exit status, its requests, what the \
            client did, and the checks the verdict failed; then 'survived N of M'. A run \
            survives when the command exits 0 and the verdict passes; exits 1 when one did not. \
            See docs/sweep.md.
            """
    )

    @Option(help: ArgumentHelp("The endpoint, as its scenario file writes it: \"GET /isUserNameAvailable\".", valueName: "endpoint"))
    var endpoint: String

    @Option(help: ArgumentHelp("Only these rules, by name, comma-separated (default: every rule of the endpoint).", valueName: "a,b,..."))
    var rules: String?

    @Option(help: ArgumentHelp("Stop a run still going after this long (SIGTERM, then SIGKILL 2 s later). " + DurationOption.rule, valueName: "duration"))
    var timeout = DurationOption(seconds: 60)

    @Option(name: .customLong("max-attempts"), help: ArgumentHelp("The verdict's attempt budget (see mishap verdict; the server's default: 5).", valueName: "count"))
    var maxAttempts: Int?

    @Option(name: .customLong("give-up-within"), help: ArgumentHelp("How long the verdict lets a client wait on a hung answer (the server's default: 60 s). " + DurationOption.rule, valueName: "duration"))
    var giveUpWithin: DurationOption?

    @Option(name: .customLong("session-prefix"), help: ArgumentHelp("The server's session prefix, put in MISHAP_URL (as serve's --session-prefix).", valueName: "prefix"))
    var sessionPrefix = "/__session"

    @Option(help: ArgumentHelp("Also write the sweep as JUnit XML to this file, one test case per rule.", valueName: "file"))
    var junit: String?

    @Flag(help: "Print the runs as JSON instead of the table (the command's standard output goes to standard error).")
    var json = false

    @OptionGroup var admin: AdminServerOptions<Sweep>

    @OptionGroup var pid: PidFileOption

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command to run, after --: its program (found on the PATH) and arguments.", valueName: "command"))
    var command: [String] = []

    /// How long a stopped command has between SIGTERM and SIGKILL.
    static let graceMilliseconds = 2000

    func validate() throws {
        let words = endpoint.split(separator: " ")
        guard words.count == 2, words[1].hasPrefix("/") else {
            throw ValidationError("--endpoint must be a method and a path: --endpoint \"GET /isUserNameAvailable\"")
        }
        if let rules, Self.names(rules).isEmpty { throw ValidationError("--rules must name at least one rule: --rules serverError,maintenance") }
        try timeout.check("--timeout", lowest: 1)
        if let maxAttempts, maxAttempts < 1 { throw ValidationError("--max-attempts must be 1 or more") }
        try giveUpWithin?.check("--give-up-within", lowest: 1)
        guard sessionPrefix.hasPrefix("/"), !sessionPrefix.hasSuffix("/") else {
            throw ValidationError("--session-prefix must be a path like /__session (starting with '/', not ending with one)")
        }
        if junit?.isEmpty == true { throw ValidationError("--junit must name a file") }
        if command.isEmpty || command[0].isEmpty { throw ValidationError("give the command to run after --: mishap sweep --endpoint \"GET /x\" -- ./test.sh") }
    }

    static func names(_ list: String) -> [String] {
        list.split(separator: ",").map { String($0.trimmingASCIIWhitespace()) }.filter { !$0.isEmpty }
    }

    func run() throws {
        // Blocked before anything else, so Control-C stops the command and cleans its session up.
        var signals = SignalSet(blocking: [SignalNumber.interrupt, SignalNumber.terminate])
        let server = admin.server(pid: pid), token = admin.token
        let base = server.hasSuffix("/") ? String(server.dropLast()) : server
        let ruleNames = try chosenRules(server: server, token: token)
        let query = VerdictQuery(endpoint: nil, maxAttempts: maxAttempts, giveUpWithinMilliseconds: giveUpWithin?.milliseconds)
        var runs: [SweepRun] = []
        for (index, rule) in ruleNames.enumerated() {
            let session = "sweep-\(Processes.current)-\(index + 1)-" + Self.sessionSafe(rule)
            printError("mishap sweep: \(rule) (\(index + 1) of \(ruleNames.count)), session \(session)")
            let outcome = runOne(rule: rule, session: session, base: base, server: server, token: token, query: query, signals: &signals)
            _ = adminCall(url: server, token: token, method: "POST", target: "/__mishap/reset?session=" + QueryText.encoded(session))
            switch outcome {
            case .success(let run): runs.append(run)
            case .failure(.interrupted(let signal)):
                printError("mishap sweep: stopped by \(ChildCommand.signalName(signal)); \(runs.count) of \(ruleNames.count) rules run")
                throw ExitCode(128 + signal)
            case .failure(.problem(let reason)):
                printError("mishap: \(reason)")
                throw ExitCode.failure
            }
        }
        let report = SweepReport(endpoint: endpoint, timeoutMilliseconds: timeout.milliseconds, runs: runs)
        if json {
            print(report.json)
        } else {
            for line in report.lines { print(line) }
        }
        if let junit, let problem = report.junit.write(to: junit) {
            printError("mishap: \(problem)")
            throw ExitCode.failure
        }
        if report.survived < runs.count { throw ExitCode.failure }
    }

    /// The rules to run: the endpoint's, all or those of `--rules` (as the scenarios name them).
    private func chosenRules(server: String, token: String?) throws -> [String] {
        let listing: JSONReading
        switch adminCall(url: server, token: token, target: "/__mishap/scenarios", timeoutMilliseconds: 10_000) {
        case .failure(let failure):
            printError("mishap: \(failure)")
            throw ExitCode.failure
        case .success((200, let body)):
            guard let parsed = JSONReading.parse(body) else {
                printError("mishap: \(server)/__mishap/scenarios is not JSON: \(body)")
                throw ExitCode.failure
            }
            listing = parsed
        case .success((let status, let body)):
            printError("mishap: the server answered \(status): \(body)")
            throw ExitCode.failure
        }
        let words = endpoint.split(separator: " ").map(String.init)
        let endpoints = listing["endpoints"]?.array ?? []
        let names = { (item: JSONReading) in "\(item["method"]?.string ?? "") \(item["path"]?.string ?? "")" }
        guard let found = endpoints.first(where: {
            $0["method"]?.string?.uppercased() == words[0].uppercased() && $0["path"]?.string == words[1]
        }) else {
            let known = endpoints.map(names)
            let suggestion = Suggestion.closest(to: endpoint, in: known).map { " (did you mean \"\($0)\"?)" } ?? ""
            printError("mishap: the server has no endpoint \"\(endpoint)\"\(suggestion); it has \(known.joined(separator: ", "))")
            throw ExitCode.failure
        }
        let all = (found["rules"]?.array ?? []).compactMap { $0["name"]?.string }
        guard let rules else { return all }
        var chosen: [String] = []
        for name in Self.names(rules) {
            guard let rule = all.first(where: { $0.lowercased() == name.lowercased() }) else {
                printError("mishap: \(endpoint) has no rule '\(name)'; its rules: \(all.joined(separator: ", "))")
                throw ExitCode.failure
            }
            if !chosen.contains(rule) { chosen.append(rule) }
        }
        return chosen
    }

    /// A rule's name as part of a session id, which is a path segment of MISHAP_URL.
    static func sessionSafe(_ name: String) -> String {
        String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") ? $0 : "-" })
    }

    enum RunFailure: Error {
        /// The sweep itself cannot go on (the server refused, the command cannot start).
        case problem(String)
        /// Control-C (or SIGTERM) came: the sweep stops.
        case interrupted(Int32)
    }

    /// Forces `rule` for `session`, runs the command, and gathers what the server saw.
    private func runOne(rule: String, session: String, base: String, server: String, token: String?, query: VerdictQuery,
                        signals: inout SignalSet) -> Result<SweepRun, RunFailure> {
        let force = "/__mishap/force?endpoint=" + QueryText.encoded(endpoint) + "&rule=" + QueryText.encoded(rule)
            + "&session=" + QueryText.encoded(session)
        switch adminCall(url: server, token: token, method: "POST", target: force) {
        case .failure(let failure): return .failure(.problem(failure.description))
        case .success((201, _)): break
        case .success((let status, let body)): return .failure(.problem("forcing \(rule): the server answered \(status): \(body)"))
        }
        let started = MonotonicClock.milliseconds()
        let environment = [(name: "MISHAP_URL", value: base + sessionPrefix + "/" + session), (name: "MISHAP_SESSION", value: session)]
        let child: ProcessID
        switch ChildCommand.start(command, setting: environment, standardOutput: json ? 2 : 1) {
        case .success(let pid): child = pid
        case .failure(let error): return .failure(.problem("cannot run \(command[0]): \(error)"))
        }
        var ending: ChildCommand.Ending?
        var timedOut = false
        let deadline = started + Int64(timeout.milliseconds)
        while ending == nil {
            if let status = Processes.waitStatusIfExited(child) {
                ending = ChildCommand.Ending(waitStatus: status)
                break
            }
            if let signal = signals.wait(milliseconds: 20) {
                Self.stop(child, signals: &signals)
                return .failure(.interrupted(signal))
            }
            if MonotonicClock.milliseconds() >= deadline {
                timedOut = true
                ending = Self.stop(child, signals: &signals)
            }
        }
        let seconds = Double(MonotonicClock.milliseconds() - started) / 1000

        var requests: Int?
        var problems: [String] = []
        switch adminCall(url: server, token: token, target: "/__mishap/requests/count?session=" + QueryText.encoded(session)) {
        case .success((200, let body)): requests = JSONReading.parse(body)?["count"]?.number.map { Int($0) }
        case .success((let status, let body)): problems.append("counting requests: the server answered \(status): \(body)")
        case .failure(let failure): problems.append("counting requests: \(failure)")
        }
        var verdict: (text: String, report: VerdictReport)?
        switch query.fetch(server: server, token: token, session: session) {
        case .success(let text):
            if let report = VerdictReport(json: text) { verdict = (text, report) } else { problems.append("the verdict is not one: \(text)") }
        case .failure(let failure): problems.append("verdict: \(failure)")
        }
        for problem in problems { printError("mishap sweep: \(rule): \(problem)") }
        return .success(SweepRun(rule: rule, session: session, ending: ending, timedOut: timedOut, seconds: seconds,
                                 requests: requests, verdictJSON: verdict?.text, verdict: verdict?.report, problems: problems))
    }

    /// Stops the command's process group: SIGTERM, then SIGKILL after the grace; how it ended.
    @discardableResult
    private static func stop(_ child: ProcessID, signals: inout SignalSet) -> ChildCommand.Ending? {
        ChildCommand.signalGroup(child, SignalNumber.terminate)
        let deadline = MonotonicClock.milliseconds() + Int64(graceMilliseconds)
        while MonotonicClock.milliseconds() < deadline {
            if let status = Processes.waitStatusIfExited(child) {
                // What it started and left behind goes too.
                ChildCommand.signalGroup(child, 9)
                return ChildCommand.Ending(waitStatus: status)
            }
            _ = signals.wait(milliseconds: 20)
        }
        ChildCommand.signalGroup(child, 9)
        return ChildCommand.waitForEnding(child)
    }
}

extension Sweep: AdminServerHelp {
    static let urlHelp = "The server (default: the URL in the pid file, else http://127.0.0.1:8080)."
}
