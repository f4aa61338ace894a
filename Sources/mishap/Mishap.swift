import ArgumentParser

@main
struct Mishap: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mishap",
        abstract: "A local HTTP mock server that fails on purpose.",
        discussion: """
            Mishap answers HTTP requests from declarative scenario files, so client apps can be \
            driven into validation errors, server failures, maintenance windows and malformed \
            payloads on demand. Without a subcommand it serves.
            """,
        version: "0.1.0",
        subcommands: [Serve.self, Start.self, Stop.self, Status.self, Validate.self, Routes.self],
        defaultSubcommand: Serve.self
    )

    static func main() {
        ScenarioPrefetch.start(arguments: CommandLine.arguments)
        main(nil)
    }
}

/// The scenarios folder argument shared by the subcommands that read one.
struct ScenariosOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The folder of scenario files to load.", valueName: "dir"))
    var scenarios: String = "./scenarios"
}
