import ArgumentParser

/// The root command, `mishap`: its subcommands, and the scenario prefetch started before parsing.
///
/// Every command names itself (`commandName:`): without it ArgumentParser derives the name from
/// `String(describing: Self.self)` at every start, whose protocol conformance lookups cost about
/// 0.8 million instructions per command (6 million of a 22 million `mishap --version`).
@main
struct MishapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mishap",
        abstract: "A local HTTP mock server that fails on purpose.",
        discussion: """
            Mishap answers HTTP requests from declarative scenario files, so client apps can be \
            driven into validation errors, server failures, maintenance windows and malformed \
            payloads on demand. Without a subcommand it serves. Durations on the command line \
            are seconds when a bare number (30, 0.5), or carry a unit (500ms, 30s, 2m, 1h), at \
            most a day. A bad option or value prints the usage and exits 64. The guides are in \
            the repository's README.md and docs/.
            """,
        version: "0.1.0",
        subcommands: [Serve.self, Record.self, Start.self, Stop.self, Status.self, StateCommand.self, Force.self, ClockCommand.self, NetworkCommand.self, Down.self, Verdict.self, Sweep.self, Validate.self, Routes.self, TLSCommand.self, Import.self],
        defaultSubcommand: Serve.self
    )

    static func main() {
        Import.handOverIfAsked(CommandLine.arguments)
        ScenarioPrefetch.start(arguments: CommandLine.arguments)
        if let serve = parseServeDirectly(CommandLine.arguments) {
            do {
                try serve.run()
            } catch {
                exit(withError: error)
            }
            return
        }
        main(nil)
    }

    /// `serve`'s arguments (named or by default) parsed by `Serve` alone, or nil for any other
    /// command and for anything `Serve` does not accept: help, a bad flag, `--version`.
    ///
    /// Parsing from the root costs `serve` about 15 million instructions at every start:
    /// ArgumentParser builds `Serve`'s argument set by reflection five times (to learn whether
    /// the default subcommand, and the subcommand named, take all remaining input, then to
    /// parse), and each build demangles every option's type again. `Serve.parse` builds it
    /// once. Whatever it refuses is parsed again from the root, so errors, usage and help read
    /// exactly as they do without this shortcut; only a successful parse is taken from here.
    static func parseServeDirectly(_ arguments: [String]) -> Serve? {
        var rest = arguments.dropFirst()
        if rest.first == "serve" {
            rest = rest.dropFirst()
        } else if let first = rest.first, !first.hasPrefix("-") || ["-h", "--help", "--version"].contains(first) {
            return nil
        }
        return try? Serve.parse(Array(rest))
    }
}
