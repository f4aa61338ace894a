import ArgumentParser
import MishapSupport

/// `mishap verdict`: how a client handled the failures it met, judged by the server
/// (`GET /__mishap/verdict`), for a person, for a script (`--json`) or for CI (`--junit`).
struct Verdict: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verdict",
        abstract: "Judge how a client handled the failures it met: Retry-After, backoff, attempts, unsafe retries, refreshes, giving up.",
        discussion: """
            Asks the running server for the verdict on a session's requests (GET \
            /__mishap/verdict) and prints a line per check: ✓ passed, ✗ failed (with the \
            requests it is based on), – nothing to judge; then the overall line. Exits 1 when a \
            check failed, 0 otherwise. --json prints the server's JSON as it is; --junit FILE \
            also writes JUnit XML, one test case per check (failed, or skipped when there was \
            nothing to judge), for CI. The server is the one the pid file names, else --url. \
            See docs/sweep.md.
            """
    )

    @Option(help: ArgumentHelp("The session to judge (X-Mishap-Session, or /__session/ID/ in the path); without it, the requests that carried no session.", valueName: "id"))
    var session: String?

    @Option(help: ArgumentHelp("Judge only this endpoint's requests: \"GET /isUserNameAvailable\".", valueName: "endpoint"))
    var endpoint: String?

    @Option(name: .customLong("max-attempts"), help: ArgumentHelp("The attempt budget: more attempts of one request than this fail attemptBudget (the server's default: 5).", valueName: "count"))
    var maxAttempts: Int?

    @Option(name: .customLong("give-up-within"), help: ArgumentHelp("How long a client may wait on a hung answer before giving up (the server's default: 60 s). " + DurationOption.rule, valueName: "duration"))
    var giveUpWithin: DurationOption?

    @Option(help: ArgumentHelp("Also write the verdict as JUnit XML to this file, one test case per check.", valueName: "file"))
    var junit: String?

    @Flag(help: "Print the server's JSON as it is, instead of the lines for a person.")
    var json = false

    @OptionGroup var admin: AdminServerOptions<Verdict>

    @OptionGroup var pid: PidFileOption

    func validate() throws {
        if session?.isEmpty == true { throw ValidationError("--session must not be empty") }
        if let endpoint, endpoint.split(separator: " ").count != 2 {
            throw ValidationError("--endpoint must be a method and a path: --endpoint \"GET /isUserNameAvailable\"")
        }
        if let maxAttempts, maxAttempts < 1 { throw ValidationError("--max-attempts must be 1 or more") }
        try giveUpWithin?.check("--give-up-within", lowest: 1)
        if junit?.isEmpty == true { throw ValidationError("--junit must name a file") }
    }

    func run() throws {
        let options = VerdictQuery(endpoint: endpoint, maxAttempts: maxAttempts, giveUpWithinMilliseconds: giveUpWithin?.milliseconds)
        let text: String
        switch options.fetch(server: admin.server(pid: pid), token: admin.token, session: session) {
        case .success(let answer): text = answer
        case .failure(let failure):
            printError("mishap: \(failure)")
            throw ExitCode.failure
        }
        guard let report = VerdictReport(json: text) else {
            printError("mishap: the server's answer is not a verdict: \(text)")
            throw ExitCode.failure
        }
        if json {
            print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
        } else {
            for line in report.lines { print(line) }
        }
        if let junit, let problem = report.junit.write(to: junit) {
            printError("mishap: \(problem)")
            throw ExitCode.failure
        }
        if !report.passed { throw ExitCode.failure }
    }
}

extension Verdict: AdminServerHelp {
    static let urlHelp = "The server (default: the URL in the pid file, else http://127.0.0.1:8080)."
}

/// The verdict call's parameters other than the session, shared by `verdict` and `sweep`.
struct VerdictQuery {
    var endpoint: String?
    var maxAttempts: Int?
    var giveUpWithinMilliseconds: Int?

    /// The call's target for `session` (nil: the requests without one).
    func target(session: String?) -> String {
        var query: [String] = []
        if let session { query.append("session=" + QueryText.encoded(session)) }
        if let endpoint { query.append("endpoint=" + QueryText.encoded(endpoint)) }
        if let maxAttempts { query.append("maxAttempts=\(maxAttempts)") }
        if let giveUpWithinMilliseconds { query.append("giveUpWithin=\(giveUpWithinMilliseconds)ms") }
        return "/__mishap/verdict" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    /// The server's verdict JSON, or why there is none.
    func fetch(server: String, token: String?, session: String?) -> Result<String, AdminCallFailure> {
        switch adminCall(url: server, token: token, target: target(session: session), timeoutMilliseconds: 10_000) {
        case .failure(let failure): return .failure(failure)
        case .success((200, let body)): return .success(body)
        case .success((404, let body)):
            return .failure(AdminCallFailure("\(server) has no verdict (GET /__mishap/verdict answered 404: \(body)); is it an older mishap?"))
        case .success((let status, let body)):
            return .failure(AdminCallFailure("the server answered \(status): \(body)"))
        }
    }
}
