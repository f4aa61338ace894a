import ArgumentParser
import MishapSupport

/// `mishap status`: whether a started server runs (its pid file), else whether one serves where
/// `state` and `force` look (its health check), or whether a URL serves.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Say whether a mishap server is running, and where.",
        discussion: """
            Exits 0 when it is running, 1 when it is not. Without a server holding the pid file, \
            asks http://127.0.0.1:8080, as 'state' and 'force' do: a server started with 'serve' \
            (or 'make run') is found too. With --url, asks the server at that address instead \
            (GET /__mishap/health), with no pid file: a health check for containers and \
            scripts; https:// URLs are checked trusting the local certificate authority \
            ($MISHAP_TLS_DIR/ca.pem, else ~/.local/share/mishap/tls/ca.pem) when there is one. A \
            server whose admin API wants a token (401) or refuses the call (403) is serving all \
            the same. A pid file no server holds is reported as stale; one naming a live process \
            that is not the mishap server holding it, or a server that does not answer at its \
            URL, exits 1.
            """
    )

    @OptionGroup var pid: PidFileOption

    @OptionGroup var admin: AdminServerOptions<Status>

    func run() throws {
        let token = admin.token
        if let url = admin.url {
            try report(url: url, token: token)
            return
        }
        let path = FileSystem.absolutePath(pid.pidFile)
        let withoutPidFile: String
        switch PidFile.check(path) {
        case .absent:
            withoutPidFile = "no pid file at \(path)"
        case .unreadable(let reason):
            print("mishap: cannot read the pid file \(path): \(reason)")
            throw ExitCode.failure
        case .starting:
            print("mishap is starting (pid file \(path)); not serving yet")
            throw ExitCode.failure
        case .server(let file, locked: true) where file.url == nil:
            print("mishap is starting (pid \(file.pid)); not serving yet")
            throw ExitCode.failure
        case .server(let file, _):
            try report(file, token: token)
            return
        case .heldByAnother(let file):
            print("mishap: a server holds the pid file \(path), but the file names process \(file.pid), which is not that server")
            throw ExitCode.failure
        case .stale(nil):
            withoutPidFile = "the pid file \(path) names no process"
        case .stale(let file?):
            withoutPidFile = "stale pid file \(path): \(file.staleReason)"
        }
        // No server holds the pid file; one may still serve here without one (`mishap serve`,
        // `make run`), where `state` and `force` would find it.
        switch healthCheck(url: defaultServerURL, token: token) {
        case .success(let health) where health.isServing:
            print(health.sentence(url: defaultServerURL) + " (\(withoutPidFile): not started with 'mishap start')")
            return
        case .success(let health):
            print("mishap is not running (\(withoutPidFile)); \(health.sentence(url: defaultServerURL))")
        case .failure(let failure):
            print("mishap is not running (\(withoutPidFile); nothing serves at \(defaultServerURL): \(failure))")
        }
        throw ExitCode.failure
    }

    /// Says how the server holding the pid file does: running when it answers at the URL the
    /// file names (as Mishap's health endpoint or not: `--no-admin` has none), not when nothing
    /// answers there (exit 1): the process alone is not a server that serves.
    private func report(_ file: PidFile, token: String?) throws {
        guard let url = file.url else {
            print("mishap is running at an unknown address (pid \(file.pid))")
            return
        }
        // Through the admin port when there is one: it answers while the serving port is down.
        switch healthCheck(url: reachableURL(file.adminURL ?? url), token: token) {
        case .success:
            // Answered, as Mishap's health endpoint or not (`--no-admin` sends the path to the
            // scenarios, or to `--upstream`): the server holding the pid file answers there.
            print("mishap is running at \(url) (pid \(file.pid))")
        case .failure(let failure):
            print("mishap runs (pid \(file.pid)) but does not answer at \(url): \(failure)")
            throw ExitCode.failure
        }
    }

    /// Says what serves at `url`: exits 0 when Mishap does (a 401 or 403 from its admin API
    /// says so too), 1 when nothing or something else answers.
    private func report(url: String, token: String?) throws {
        switch healthCheck(url: url, token: token) {
        case .success(let health):
            print(health.sentence(url: url))
            if !health.isServing { throw ExitCode.failure }
        case .failure(let failure):
            print("mishap is not serving at \(url): \(failure)")
            throw ExitCode.failure
        }
    }
}

extension Status: AdminServerHelp {
    static let urlHelp = "Check the server at this URL through its admin API instead of the pid file."
}
