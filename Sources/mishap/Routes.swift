import ArgumentParser
import MishapEngine
import MishapScenarios

struct Routes: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the endpoints of a scenarios folder and the rules of each, in match order."
    )

    @Argument(help: ArgumentHelp("The folder of scenario files.", valueName: "dir"))
    var directory: String = "./scenarios"

    func run() throws {
        let scenarios: ScenarioSet
        do {
            scenarios = try ScenarioLoader.load(directory: directory)
        } catch {
            printError(error.description)
            throw ExitCode.failure
        }
        for endpoint in scenarios.endpoints {
            print("\(endpoint.name)  (\(endpoint.source ?? "?"))")
            let width = endpoint.rules.map(\.name.count).max() ?? 0
            for rule in endpoint.rules {
                let padding = String(repeating: " ", count: width - rule.name.count)
                print("  \(rule.name)\(padding)  \(summary(of: rule.action))")
            }
        }
    }

    private func summary(of action: Rule.Action) -> String {
        switch action {
        case .respond(let response):
            return "\(response.status)"
        case .cycle(let steps, _):
            let parts = steps.map { step -> String in
                if case .respond(let response) = step { return "\(response.status)" }
                return "pass"
            }
            return "cycle " + parts.joined(separator: ", ")
        }
    }
}
