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

    @Option(name: .customLong("openapi"), help: ArgumentHelp("Check this OpenAPI description too, as serve --openapi reads it: its problems and the keywords it has that are not checked.", valueName: "file"))
    var openAPI: String?

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
        let described = try openAPI.map(Self.validate)
        let rules = scenarios.endpoints.reduce(0) { $0 + $1.rules.count }
        for warning in scenarios.warnings { printError(warning.description) }
        let warned = scenarios.warnings.isEmpty ? "" : " with \(scenarios.warnings.count) warning(s)"
        print("\(directory): \(scenarios.files.count) file(s), \(scenarios.endpoints.count) endpoint(s), \(rules) rule(s): valid\(warned)")
        if strict && (!scenarios.warnings.isEmpty || described?.warnings.isEmpty == false) { throw ExitCode.failure }
    }

    /// The description at `path` read as `serve --openapi` reads it: its problems printed (and
    /// exit 1), else its warnings and a line saying how many operations it checks.
    static func validate(_ path: String) throws -> OpenAPILoader.Loaded {
        do {
            let loaded = try OpenAPILoader.load(path: path)
            for warning in loaded.warnings { printError(warning.description) }
            let warned = loaded.warnings.isEmpty ? "" : " with \(loaded.warnings.count) warning(s)"
            print("\(path): \(loaded.contract.operationCount) operation(s) checked: valid\(warned)")
            return loaded
        } catch {
            printError(error.description)
            printError("\(path): \(error.diagnostics.count) problem(s)")
            throw ExitCode.failure
        }
    }
}
