import ArgumentParser
import MishapScenarios

/// `mishap validate`: loads a scenarios folder and reports its problems, without serving.
struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a scenarios folder without serving it.",
        discussion: "Prints every problem as file:line:column: message, then warnings (file:line:column: warning: ...) for what loads but is probably a mistake, such as a rule that can never answer. Exits 0 when the folder is valid (warnings or not; 1 with --strict when there are warnings), 1 when not."
    )

    @OptionGroup var folder: ScenariosFolderArguments

    @Flag(help: "Exit 1 when there are warnings too (for CI).")
    var strict = false

    func run() throws {
        let directory = folder.folder
        let scenarios: ScenarioSet
        do {
            scenarios = try ScenarioLoader.load(directory: directory)
        } catch {
            printError(error.description)
            printError("\(directory): \(error.diagnostics.count) problem(s)")
            throw ExitCode.failure
        }
        let rules = scenarios.endpoints.reduce(0) { $0 + $1.rules.count }
        for warning in scenarios.warnings { printError(warning.description) }
        let warned = scenarios.warnings.isEmpty ? "" : " with \(scenarios.warnings.count) warning(s)"
        print("\(directory): \(scenarios.files.count) file(s), \(scenarios.endpoints.count) endpoint(s), \(rules) rule(s): valid\(warned)")
        if strict && !scenarios.warnings.isEmpty { throw ExitCode.failure }
    }
}
