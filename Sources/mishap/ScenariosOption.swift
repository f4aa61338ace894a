import ArgumentParser

/// The scenarios folder argument shared by the subcommands that read one.
struct ScenariosOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The folder of scenario files to load.", valueName: "dir"))
    var scenarios: String = "./scenarios"
}
