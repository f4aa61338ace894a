import ArgumentParser
import MishapSupport

/// The scenarios folder argument shared by the subcommands that read one.
struct ScenariosOption: ParsableArguments {
    @Option(name: .customLong("scenarios"), help: ArgumentHelp(
        "The folder of scenario files to load (default: ./scenarios, else the installed default scenarios).", valueName: "dir"))
    var given: String?

    /// The folder given, else the default (`DefaultScenarios.folder`).
    var scenarios: String { given ?? DefaultScenarios.folder }
}

/// The scenarios folder of `validate` and `routes`: an argument, or `--scenarios` as for `serve`
/// (both at once only when they name the same folder).
struct ScenariosFolderArguments: ParsableArguments {
    @Argument(help: ArgumentHelp("The folder of scenario files (default: ./scenarios, else the installed default scenarios).", valueName: "dir"))
    var directory: String?

    @Option(name: .long, help: ArgumentHelp("The folder of scenario files, as for serve (instead of the argument).", valueName: "dir"))
    var scenarios: String?

    func validate() throws {
        if let directory, let scenarios, directory != scenarios {
            throw ValidationError("the scenarios folder is given twice, as '\(directory)' and with --scenarios '\(scenarios)'; give it once")
        }
    }

    /// The folder given, either way, else the default (`DefaultScenarios.folder`).
    var folder: String { scenarios ?? directory ?? DefaultScenarios.folder }
}

/// Where the scenarios come from when no folder is given: `./scenarios` when the current folder
/// has one (a checkout of Mishap, or a project that keeps its own), else the default scenarios
/// `make install` puts beside the binary (`PREFIX/share/mishap/scenarios` for
/// `PREFIX/bin/mishap`), else `./scenarios` again, so the error names the folder people expect.
enum DefaultScenarios {
    static let local = "./scenarios"

    static var folder: String {
        if FileSystem.isDirectory(local) { return local }
        if let installed, FileSystem.isDirectory(installed) { return installed }
        return local
    }

    /// `share/mishap/scenarios` beside the running binary's `bin` folder.
    static var installed: String? {
        guard let binary = FileSystem.realPath(Spawn.executablePath) else { return nil }
        let bin = binary.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        guard bin.last == "bin" else { return nil }
        return bin.dropLast().joined(separator: "/") + "/share/mishap/scenarios"
    }
}
