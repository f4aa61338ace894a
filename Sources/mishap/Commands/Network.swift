import ArgumentParser
import MishapEngine
import MishapSupport

/// `mishap network`: sets, shows or removes a session's network profile on a running server
/// (`/__mishap/network`).
struct NetworkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "network",
        abstract: "Set, show or remove a session's network profile on a running server.",
        discussion: """
            'mishap network --session s1 edge' puts every answer to session s1 through the Edge \
            preset: 840 ms more before each answer, 30 kB/s down. A profile of one's own is \
            JSON: mishap network --session s1 '{"latency": "2s", "loss": 0.1}'. --for ends it by \
            itself; --off removes it; with neither a profile nor --off, the session's profile is \
            shown. Prints the profile in force as JSON. Presets: \
            \(NetworkPresets.names.joined(separator: ", ")). The server is the one the pid file \
            names, else --url.
            """
    )

    @Option(help: ArgumentHelp("The session (X-Mishap-Session).", valueName: "id"))
    var session: String

    @Argument(help: ArgumentHelp("A preset's name, or a profile as JSON.", valueName: "profile"))
    var profile: String?

    @Option(name: .customLong("for"), help: ArgumentHelp("End the profile by itself after this long. " + DurationOption.rule, valueName: "duration"))
    var duration: DurationOption?

    @Flag(help: "Remove the session's profile.")
    var off = false

    @OptionGroup var admin: AdminServerOptions<NetworkCommand>

    @OptionGroup var pid: PidFileOption

    func validate() throws {
        if session.isEmpty { throw ValidationError("--session must not be empty") }
        try duration?.check("--for", lowest: 1)
        if off && (profile != nil || duration != nil) { throw ValidationError("--off removes the session's profile; give it alone") }
        if duration != nil && profile == nil { throw ValidationError("--for goes with a profile: mishap network --session ID --for 30s edge") }
        if let profile, !profile.hasPrefix("{"), NetworkPresets.named(profile) == nil {
            throw ValidationError("'\(profile)' is not a preset (\(NetworkPresets.names.joined(separator: ", "))) nor a JSON profile")
        }
    }

    func run() throws {
        var target = "/__mishap/network?session=\(QueryText.encoded(session))"
        var method = off ? "DELETE" : "GET", body = ""
        if let profile {
            method = "PUT"
            body = profile.hasPrefix("{") ? profile : #"{"preset": "\#(profile)"}"#
            if let duration { target += "&for=\(duration.milliseconds)ms" }
        }
        switch adminCall(url: admin.server(pid: pid), token: admin.token, method: method, target: target, body: body) {
        case .failure(let failure):
            printError("mishap: \(failure)")
            throw ExitCode.failure
        case .success((200, let answer)):
            print(answer)
        case .success((let status, let answer)):
            printError("mishap: the server answered \(status): \(answer)")
            throw ExitCode.failure
        }
    }
}

extension NetworkCommand: AdminServerHelp {
    static let urlHelp = "The server (default: the URL in the pid file, else http://127.0.0.1:8080)."
}
