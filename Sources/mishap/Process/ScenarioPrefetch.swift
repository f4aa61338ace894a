import MishapScenarios
import MishapSupport

/// Loads the scenarios folder `serve` is going to ask for on a second thread, while the main
/// thread parses the command line: the two take a few milliseconds each at startup, and doing
/// them side by side shortens the time to the first response.
///
/// The folder is guessed from the raw arguments (`--scenarios DIR`, `--scenarios=DIR`, or the
/// default). `Serve` uses the result only when the folder it parsed is the one guessed; any
/// other case loads as usual, so a wrong guess costs time, never correctness.
final class ScenarioPrefetch: @unchecked Sendable {
    /// Started by `MishapCommand.main` before parsing; nil for other subcommands.
    nonisolated(unsafe) static var started: ScenarioPrefetch?

    let directory: String
    private var outcome: Result<ScenarioSet, ScenarioError>?
    /// Posted when `outcome` is set. The thread is detached, not joined: a command that ends
    /// before asking (a bad flag, `--help`) must not leave a thread nobody waits for.
    private let done = Latch()

    private init(directory: String) {
        self.directory = directory
    }

    /// Starts loading when the arguments are those of `serve`, named or by default.
    static func start(arguments: [String]) {
        guard let directory = servedDirectory(arguments: arguments) else { return }
        let prefetch = ScenarioPrefetch(directory: directory)
        let thread = OwnThread(detached: true) {
            do throws(ScenarioError) {
                prefetch.outcome = .success(try ScenarioLoader.load(directory: prefetch.directory))
            } catch {
                prefetch.outcome = .failure(error)
            }
            prefetch.done.open()
        }
        if thread != nil { started = prefetch }
    }

    /// The scenarios of `directory`: the prefetched result when it is that folder's, else a load now.
    static func load(directory: String) throws(ScenarioError) -> ScenarioSet {
        if let prefetch = started, prefetch.directory == directory {
            started = nil
            prefetch.done.wait()
            if let outcome = prefetch.outcome { return try outcome.get() }
        }
        return try ScenarioLoader.load(directory: directory)
    }

    /// The folder `serve` will read, when the arguments are `serve`'s: no subcommand name, or
    /// `serve` itself.
    static func servedDirectory(arguments: [String]) -> String? {
        var rest = arguments.dropFirst()
        if rest.first == "serve" {
            rest = rest.dropFirst()
        } else if let first = rest.first, !first.hasPrefix("-") || first == "-h" || first == "--help" || first == "--version" {
            return nil
        }
        var directory = "./scenarios"
        var arguments = rest.makeIterator()
        while let argument = arguments.next() {
            if argument == "--scenarios" {
                guard let value = arguments.next() else { return nil }
                directory = value
            } else if argument.hasPrefix("--scenarios=") {
                directory = String(argument.dropFirst("--scenarios=".count))
            } else if argument == "-h" || argument == "--help" || argument == "--" {
                return nil
            }
        }
        return directory
    }
}
