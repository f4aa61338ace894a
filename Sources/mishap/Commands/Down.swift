import ArgumentParser
import MishapSupport

/// `mishap down`: takes a running server's serving port down for a while, so new connections are
/// refused, or says whether it is down (`/__mishap/down`; docs/refused-connections.md).
struct Down: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "down",
        abstract: "Take a running server's serving port down for a while: new connections are refused.",
        discussion: """
            'mishap down --for 5s' closes the serving port for five seconds: clients trying to \
            connect are refused (curl exits 7, URLSession reports cannotConnectToHost, OkHttp a \
            ConnectException), requests in flight finish, and idle keep-alive connections are \
            closed. Then the port comes back by itself; '--end' brings it back at once, and \
            without either the command says whether it is down. The server must have been \
            started with --admin-port (the admin API stays up there, and the pid file names it); \
            prints the state as JSON. The server is the one the pid file names, else --url.
            """
    )

    @Option(name: .customLong("for"), help: ArgumentHelp("How long the port stays down (at most a day). " + DurationOption.rule, valueName: "duration"))
    var duration: DurationOption?

    @Flag(help: "Bring the serving port back at once.")
    var end = false

    @OptionGroup var admin: AdminServerOptions<Down>

    @OptionGroup var pid: PidFileOption

    func validate() throws {
        try duration?.check("--for", lowest: 1)
        if duration != nil && end { throw ValidationError("give --for or --end, not both") }
    }

    func run() throws {
        let call: (method: String, target: String) = if let duration {
            ("POST", "/__mishap/down?for=\(duration.milliseconds)ms")
        } else if end {
            ("DELETE", "/__mishap/down")
        } else {
            ("GET", "/__mishap/down")
        }
        switch adminCall(url: admin.server(pid: pid), token: admin.token, method: call.method, target: call.target) {
        case .failure(let failure):
            printError("mishap: \(failure)")
            throw ExitCode.failure
        case .success((200, let body)):
            print(body)
        case .success((let status, let body)):
            printError("mishap: the server answered \(status): \(body)")
            throw ExitCode.failure
        }
    }
}

extension Down: AdminServerHelp {
    static let urlHelp = "The server's admin port (default: the admin URL in the pid file, else http://127.0.0.1:8080)."
}
