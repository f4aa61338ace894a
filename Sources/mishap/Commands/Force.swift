import ArgumentParser
import MishapEngine
import MishapSupport

/// `mishap force`: the one-line way to make a running server's endpoint answer with one of its
/// rules for the next requests (`POST /__mishap/force`).
struct Force: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "force",
        abstract: "Make an endpoint of a running server answer with one of its rules: the next N requests, or for a while.",
        discussion: """
            'mishap force "POST /login" maintenance --times 3' makes the next 3 logins answer \
            with the rule maintenance, as the header X-Mishap-Rule would; without --times or \
            --for, until the rule is removed (DELETE /__mishap/rules/ID) or the server reset. \
            With --session, only that session's requests. The server is the one the pid file \
            names, else --url. Prints the rule added, with its id; an unknown endpoint or rule \
            exits 1 with the server's reason and a suggestion.
            """
    )

    @Argument(help: ArgumentHelp("The endpoint, as its scenario file writes it: \"POST /login\" (or POST /login, two words), then the rule's name or alias, in any case.", valueName: "endpoint rule"))
    var words: [String] = []

    @Option(help: ArgumentHelp("How many requests it answers; then it is gone.", valueName: "count"))
    var times: Int?

    @Option(name: .customLong("for"), help: ArgumentHelp("How long it lasts. " + DurationOption.rule, valueName: "duration"))
    var duration: DurationOption?

    @Option(help: ArgumentHelp("Only this session's requests (X-Mishap-Session, or /__session/ID/ in the path).", valueName: "id"))
    var session: String?

    @OptionGroup var admin: AdminServerOptions<Force>

    @OptionGroup var pid: PidFileOption

    /// The endpoint and the rule of `words`.
    var target: (endpoint: String, rule: String)? {
        switch words.count {
        case 2: return (words[0], words[1])
        case 3: return (words[0] + " " + words[1], words[2])
        default: return nil
        }
    }

    func validate() throws {
        guard let target, target.endpoint.split(separator: " ").count == 2 else {
            throw ValidationError("give the endpoint and the rule: mishap force \"POST /login\" maintenance")
        }
        if let times, times < 1 { throw ValidationError("--times must be 1 or more") }
        try duration?.check("--for", lowest: 1)
        if session?.isEmpty == true { throw ValidationError("--session must not be empty") }
    }

    func run() throws {
        guard let target else { throw ExitCode.validationFailure }
        let server = admin.server(pid: pid), token = admin.token
        var query = ["endpoint=" + QueryText.encoded(target.endpoint), "rule=" + QueryText.encoded(target.rule)]
        if let times { query.append("times=\(times)") }
        if let duration { query.append("ttl=\(duration.milliseconds)ms") }
        if let session { query.append("session=" + QueryText.encoded(session)) }
        switch adminCall(url: server, token: token, method: "POST", target: "/__mishap/force?" + query.joined(separator: "&")) {
        case .failure(let failure):
            printError("mishap: \(failure)")
            throw ExitCode.failure
        case .success((201, let answer)):
            print(answer)
        case .success((let status, let answer)):
            printError("mishap: the server answered \(status): \(answer)")
            throw ExitCode.failure
        }
    }
}

extension Force: AdminServerHelp {
    static let urlHelp = "The server (default: the URL in the pid file, else http://127.0.0.1:8080)."
}
