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
            payloads on demand. Without a subcommand it serves.
            """,
        version: "0.1.0",
        subcommands: [Serve.self, Start.self, Stop.self, Status.self, StateCommand.self, Force.self, Validate.self, Routes.self, TLSCommand.self],
        defaultSubcommand: Serve.self
    )

    static func main() {
        ScenarioPrefetch.start(arguments: CommandLine.arguments)
        main(nil)
    }
}
