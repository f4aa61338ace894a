import ArgumentParser
import MishapSupport

/// `mishap status`: whether a started server runs (its pid file), or whether a URL serves (its health check).
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Say whether a server started with 'start' is running, and where.",
        discussion: """
            Exits 0 when it is running, 1 when it is not. With --url, asks the server at that \
            address instead (GET /__mishap/health, 200 expected), with no pid file: a health \
            check for containers and scripts.
            """
    )

    @OptionGroup var pid: PidFileOption

    @Option(help: ArgumentHelp("Check the server at this URL through its admin API instead of the pid file.", valueName: "url"))
    var url: String?

    @Option(name: .customLong("admin-token"), help: ArgumentHelp("The server's admin token, for --url (read from MISHAP_ADMIN_TOKEN when not given).", valueName: "token"))
    var adminToken: String?

    func validate() throws {
        if let adminToken, adminToken.isEmpty || !adminToken.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw ValidationError("--admin-token must be printable ASCII with no spaces, and not empty")
        }
    }

    func run() throws {
        if let url {
            let token = adminToken ?? getenv(ServeOptions.adminTokenVariable).map { String(cString: $0) }
            switch healthCheck(url: url, token: token) {
            case .success:
                print("mishap is serving at \(url)")
                return
            case .failure(let failure):
                print("mishap is not serving at \(url): \(failure)")
                throw ExitCode.failure
            }
        }
        let path = FileSystem.absolutePath(pid.pidFile)
        switch PidFile.check(path) {
        case .absent:
            print("mishap is not running (no pid file at \(path))")
        case .unreadable(let reason):
            print("mishap: cannot read the pid file \(path): \(reason)")
        case .starting:
            print("mishap is starting (pid file \(path)); not serving yet")
        case .server(let file, locked: true) where file.url == nil:
            print("mishap is starting (pid \(file.pid)); not serving yet")
        case .server(let file, _):
            print("mishap is running at \(file.url ?? "an unknown address") (pid \(file.pid))")
            return
        case .heldByAnother(let file):
            print("mishap: a server holds the pid file \(path), but the file names process \(file.pid), which is not that server")
        case .stale(nil):
            print("mishap is not running (the pid file \(path) names no process)")
        case .stale(let file?):
            print("mishap is not running (stale pid file \(path): \(file.staleReason))")
        }
        throw ExitCode.failure
    }
}
