import ArgumentParser
import MishapEngine
import MishapScenarios

/// `mishap routes`: the endpoints of a scenarios folder and their rules, in match order.
struct Routes: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the endpoints of a scenarios folder and the rules of each, in match order.",
        discussion: "Each rule is shown with its aliases, when it answers (its `when` and `chance` in brief) and what it answers."
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
            let names = endpoint.rules.map(Self.shownName)
            let triggers = endpoint.rules.map { $0.triggerSummary() }
            let nameWidth = names.map(\.count).max() ?? 0
            let triggerWidth = triggers.map(\.count).max() ?? 0
            for (index, rule) in endpoint.rules.enumerated() {
                print("  " + Self.padded(names[index], nameWidth) + "  " + Self.padded(triggers[index], triggerWidth)
                    + "  -> " + summary(of: rule))
            }
        }
    }

    /// The rule's name, with its aliases in parentheses.
    static func shownName(_ rule: Rule) -> String {
        rule.aliases.isEmpty ? rule.name : "\(rule.name) (\(rule.aliases.joined(separator: ", ")))"
    }

    /// `text` padded with spaces to `width` characters.
    static func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
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
