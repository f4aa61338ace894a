import ArgumentParser
import MishapSupport

/// `mishap state`: reads or changes the state values of a running server, for one session or for
/// requests without one, through `GET` and `POST /__mishap/state`.
struct StateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Show or change the state values of a running server (an outage on, a token revoked).",
        discussion: """
            Without NAME=VALUE, prints the values of the server's state as JSON. With them, sets \
            each (for a while with --for, after which it returns to its initial value) and \
            prints the values after. Values are given as text and read as their declarations' \
            types: 'mishap state searchOutage=true --for 30s', 'mishap state --session test-1 \
            refreshFailure=500'. The server is the one the pid file names, else --url. A change \
            the server refuses (a name not declared, a value of another type) changes nothing \
            and exits 1 with the server's reason.
            """
    )

    @Argument(help: ArgumentHelp("Values to set.", valueName: "name=value"))
    var assignments: [String] = []

    @Option(help: ArgumentHelp("The session whose values to show or change (X-Mishap-Session); without it, those of requests without a session.", valueName: "id"))
    var session: String?

    @Option(name: .customLong("for"), help: ArgumentHelp("How long the values set last before they return to their initial values. " + DurationOption.rule, valueName: "duration"))
    var duration: DurationOption?

    @OptionGroup var admin: AdminServerOptions<StateCommand>

    @OptionGroup var pid: PidFileOption

    func validate() throws {
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ValidationError("'\(assignment)' must be NAME=VALUE, like searchOutage=true")
            }
        }
        if duration != nil && assignments.isEmpty {
            throw ValidationError("--for needs values to set (NAME=VALUE)")
        }
        try duration?.check("--for")
        if session?.isEmpty == true { throw ValidationError("--session must not be empty") }
    }

    func run() throws {
        let server = admin.server(pid: pid), token = admin.token
        var target = "/__mishap/state"
        if let session { target += "?session=" + QueryText.encoded(session) }
        let method = assignments.isEmpty ? "GET" : "POST"
        switch adminCall(url: server, token: token, method: method, target: target, body: requestBody()) {
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

    /// `{"NAME": "VALUE", ...}`, each value `{"value": "VALUE", "for": "30000ms"}` with --for.
    private func requestBody() -> String {
        guard !assignments.isEmpty else { return "" }
        var out: [UInt8] = Array("{".utf8)
        for (index, assignment) in assignments.enumerated() {
            let equals = assignment.firstIndex(of: "=")!
            if index > 0 { out.append(UInt8(ascii: ",")) }
            Self.appendString(String(assignment[..<equals]), to: &out)
            out.append(UInt8(ascii: ":"))
            let value = String(assignment[assignment.index(after: equals)...])
            if let duration {
                out += Array(#"{"value":"#.utf8)
                Self.appendString(value, to: &out)
                out += Array(#","for":"#.utf8)
                // In milliseconds with their unit: what the server reads whatever its version.
                Self.appendString("\(duration.milliseconds)ms", to: &out)
                out.append(UInt8(ascii: "}"))
            } else {
                Self.appendString(value, to: &out)
            }
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    private static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        JSONEscaping.appendEscaped(text, to: &out)
        out.append(UInt8(ascii: "\""))
    }

}

extension StateCommand: AdminServerHelp {
    static let urlHelp = "The server to ask (default: the URL in the pid file, else http://127.0.0.1:8080)."
}
