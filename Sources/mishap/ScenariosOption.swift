import ArgumentParser

/// The scenarios folder argument shared by the subcommands that read one.
struct ScenariosOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The folder of scenario files to load.", valueName: "dir"))
    var scenarios: String = "./scenarios"
}

/// The scenarios folder of `validate` and `routes`: an argument, or `--scenarios` as for `serve`
/// (both at once only when they name the same folder).
struct ScenariosFolderArguments: ParsableArguments {
    @Argument(help: ArgumentHelp("The folder of scenario files (default: ./scenarios).", valueName: "dir"))
    var directory: String?

    @Option(name: .long, help: ArgumentHelp("The folder of scenario files, as for serve (instead of the argument).", valueName: "dir"))
    var scenarios: String?

    func validate() throws {
        if let directory, let scenarios, directory != scenarios {
            throw ValidationError("the scenarios folder is given twice, as '\(directory)' and with --scenarios '\(scenarios)'; give it once")
        }
    }

    /// The folder given, either way, else ./scenarios.
    var folder: String { scenarios ?? directory ?? "./scenarios" }
}
