import ArgumentParser
import MishapScenarios

/// `mishap validate`: loads a scenarios folder and reports its problems, without serving.
struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a scenarios folder without serving it.",
        discussion: "Prints every problem as file:line:column: message. Exits 0 when the folder is valid, 1 when not."
    )

    @OptionGroup var folder: ScenariosFolderArguments

    func run() throws {
        let directory = folder.folder
        do {
            let scenarios = try ScenarioLoader.load(directory: directory)
            let rules = scenarios.endpoints.reduce(0) { $0 + $1.rules.count }
            print("\(directory): \(scenarios.files.count) file(s), \(scenarios.endpoints.count) endpoint(s), \(rules) rule(s): valid")
        } catch {
            printError(error.description)
            printError("\(directory): \(error.diagnostics.count) problem(s)")
            throw ExitCode.failure
        }
    }
}
