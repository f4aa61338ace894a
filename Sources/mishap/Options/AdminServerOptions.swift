import ArgumentParser
import MishapSupport

/// The running server a command calls through its admin API: `--url` and `--admin-token`, the
/// same for `status`, `state`, `force` and `routes`. Each command words their help for what it
/// does with them (`Help`); what users type, and how the token is read, is the same everywhere.
struct AdminServerOptions<Help: AdminServerHelp>: ParsableArguments {
    @Option(help: ArgumentHelp(Help.urlHelp, valueName: "url"))
    var url: String?

    @Option(name: .customLong("admin-token"), help: ArgumentHelp(Help.adminTokenHelp, valueName: "token"))
    var adminToken: String?

    func validate() throws {
        if let adminToken, adminToken.isEmpty || !adminToken.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw ValidationError("--admin-token must be printable ASCII with no spaces, and not empty")
        }
    }

    /// The admin token: `--admin-token`, else `MISHAP_ADMIN_TOKEN`, else none.
    var token: String? {
        adminToken ?? Platform.environment(ServeOptions.adminTokenVariable)
    }

    /// The server to call: `--url`, else the one the pid file names, else `defaultServerURL`.
    func server(pid: PidFileOption) -> String {
        url ?? PidFileOption.serverURL(pid) ?? defaultServerURL
    }
}

/// How a command words the help of its `--url` and `--admin-token` (`AdminServerOptions`).
protocol AdminServerHelp {
    /// The help of `--url`.
    static var urlHelp: String { get }
    /// The help of `--admin-token`.
    static var adminTokenHelp: String { get }
}

extension AdminServerHelp {
    static var adminTokenHelp: String { "The server's admin token (read from MISHAP_ADMIN_TOKEN when not given)." }
}
