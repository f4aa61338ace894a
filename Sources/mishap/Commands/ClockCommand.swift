import ArgumentParser
import MishapSupport

/// `mishap clock`: shows or moves a session's clock on a running server, and scales the waits it
/// is told (`/__mishap/clock`, `/__mishap/sessions/ID`).
struct ClockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock",
        abstract: "Show or move a session's clock on a running server, or scale the Retry-After it is sent.",
        discussion: """
            'mishap clock --session s1 --advance 60s' moves session s1's clock forward a minute, \
            as if that time had passed for it alone: its tokens expire, its quota windows pass, \
            its outage windows end. Other sessions, and requests without a session, do not move. \
            --reset forgets the offset. '--retry-after-scale 0.01' makes every Retry-After and \
            RateLimit-Reset sent to the session a hundredth (Retry-After: 17 is sent as 1), so a \
            client that honours them gets through in seconds; --end ends both. Prints the \
            session's settings as JSON: its clock offset and its scale. The server is the one \
            the pid file names, else --url.
            """
    )

    @Option(help: ArgumentHelp("The session (X-Mishap-Session).", valueName: "id"))
    var session: String

    @Option(help: ArgumentHelp("Move the session's clock forward this much (offsets add up). " + DurationOption.rule, valueName: "duration"))
    var advance: DurationOption?

    @Flag(help: "Forget the session's clock offset (what expired stays expired).")
    var reset = false

    @Option(help: ArgumentHelp("Scale every Retry-After and RateLimit-Reset sent to the session: over 0, at most 1.", valueName: "factor"))
    var retryAfterScale: Double?

    @Flag(help: "End the session's settings: its clock offset and its scale.")
    var end = false

    @OptionGroup var admin: AdminServerOptions<ClockCommand>

    @OptionGroup var pid: PidFileOption

    func validate() throws {
        if session.isEmpty { throw ValidationError("--session must not be empty") }
        try advance?.check("--advance", lowest: 1)
        if advance != nil && reset { throw ValidationError("give --advance or --reset, not both") }
        if let retryAfterScale, !(retryAfterScale > 0 && retryAfterScale <= 1) {
            throw ValidationError("--retry-after-scale must be over 0 and at most 1 (0.01 sends Retry-After: 17 as 1); not \(retryAfterScale)")
        }
        if end && (advance != nil || reset || retryAfterScale != nil) {
            throw ValidationError("--end ends every setting of the session; give it alone")
        }
    }

    func run() throws {
        let server = admin.server(pid: pid), token = admin.token
        let id = QueryText.encoded(session)
        var calls: [(method: String, target: String)] = []
        if let advance { calls.append(("POST", "/__mishap/clock?session=\(id)&advance=\(advance.milliseconds)ms")) }
        if reset { calls.append(("POST", "/__mishap/clock?session=\(id)&reset=true")) }
        if let retryAfterScale { calls.append(("POST", "/__mishap/sessions/\(id)?retryAfterScale=\(retryAfterScale)")) }
        calls.append((end ? "DELETE" : "GET", "/__mishap/sessions/\(id)"))
        var answer = ""
        for call in calls {
            switch adminCall(url: server, token: token, method: call.method, target: call.target) {
            case .failure(let failure):
                printError("mishap: \(failure)")
                throw ExitCode.failure
            case .success((200, let body)):
                answer = body
            case .success((let status, let body)):
                printError("mishap: the server answered \(status): \(body)")
                throw ExitCode.failure
            }
        }
        print(answer)
    }
}

extension ClockCommand: AdminServerHelp {
    static let urlHelp = "The server (default: the URL in the pid file, else http://127.0.0.1:8080)."
}
