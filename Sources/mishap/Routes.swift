import ArgumentParser
import MishapEngine
import MishapScenarios

/// `mishap routes`: the endpoints of a scenarios folder and their rules, in match order.
struct Routes: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the endpoints of a scenarios folder and the rules of each, in match order."
    )

    @OptionGroup var folder: ScenariosFolderArguments

    func run() throws {
        let directory = folder.folder
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
                print("  \(rule.name)\(padding)  \(summary(of: rule))")
            }
        }
    }

    private func summary(of rule: Rule) -> String {
        var text: String
        switch rule.action {
        case .respond(let response):
            text = describe(response)
        case .cycle(let steps, _):
            text = "cycle " + steps.map { step -> String in
                if case .respond(let response) = step { return describe(response) }
                return "pass"
            }.joined(separator: ", ")
        }
        if let chance = rule.chance { text += " (chance \(chance))" }
        return text
    }

    private func describe(_ response: ResponseTemplate) -> String {
        if response.hang { return "hang" }
        if let fault = response.fault { return "fault \(fault.rawValue)" }
        var text = "\(response.status)"
        switch response.delay {
        case .fixed(let milliseconds)?: text += " after \(milliseconds) ms"
        case .uniform(let range)?: text += " after \(range.lowerBound)-\(range.upperBound) ms"
        case nil: break
        }
        if let dribble = response.dribble { text += " in \(dribble.chunks) pieces over \(dribble.milliseconds) ms" }
        return text
    }
}
