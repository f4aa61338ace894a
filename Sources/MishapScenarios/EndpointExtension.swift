import MishapSupport
import MishapEngine

/// Rules a file adds to an endpoint declared in another file (`extends: POST /login`), so a
/// user keeps their own failures for a shipped endpoint in a file of their own. Placed after
/// every file is compiled, in file path order: at the top of the endpoint's rules (after those
/// added at the top by earlier files), or just above the rule named by `before:`.
struct EndpointExtension {
    /// The file that adds the rules, as shown in messages.
    var file: String
    /// The endpoint extended, as `METHOD /path`.
    var target: String
    /// Where `extends:` names it.
    var targetNode: YAMLNode
    var rules: [Rule]
    /// Each rule's name and aliases, with where they are written.
    var names: [[(name: String, node: YAMLNode)]]
    /// The rule to add them above, with where it is named; nil adds them at the top.
    var before: (name: String, node: YAMLNode)?

    /// A problem at `node` of this extension's file.
    func problem(_ message: String, at node: YAMLNode) -> ScenarioDiagnostic {
        ScenarioDiagnostic(file: file, line: node.mark.line, column: node.mark.column, message: message)
    }
}

extension ScenarioLoader {
    /// `endpoints` with every extension's rules placed, and the problems found: an endpoint
    /// that is not declared, a `before:` rule it does not have, a name or alias it already has.
    static func placing(_ extensions: [EndpointExtension], into endpoints: [Endpoint])
        -> (endpoints: [Endpoint], problems: [ScenarioDiagnostic]) {
        var endpoints = endpoints
        var problems: [ScenarioDiagnostic] = []
        // How many rules have been added at the top of each endpoint, so later files' go below.
        var addedAtTop: [Int: Int] = [:]
        for addition in extensions {
            guard let index = endpoints.firstIndex(where: { $0.name == addition.target }) else {
                let known = endpoints.map(\.name)
                problems.append(addition.problem(
                    "'extends: \(addition.target)': no endpoint '\(addition.target)' is declared\(Suggestion.hint(for: addition.target, in: known))",
                    at: addition.targetNode))
                continue
            }
            let endpoint = endpoints[index]
            var rules = endpoint.rules
            var position = addedAtTop[index, default: 0]
            if let before = addition.before {
                guard let named = rules.firstIndex(where: { $0.name == before.name }) else {
                    problems.append(addition.problem(
                        "'before: \(before.name)': \(endpoint.name) has no rule '\(before.name)'\(Suggestion.hint(for: before.name, in: rules.map(\.name)))",
                        at: before.node))
                    continue
                }
                position = named
            }
            var taken: [String: Rule] = [:]
            for rule in rules { for name in [rule.name] + rule.aliases { taken[name.lowercased()] = rule } }
            var clash = false
            for names in addition.names {
                for (name, node) in names {
                    if let other = taken[name.lowercased()] {
                        let place = other.location.map { " (\($0.file):\($0.line):\($0.column))" } ?? ""
                        problems.append(addition.problem("\(endpoint.name) already has a rule named '\(name)'\(place)", at: node))
                        clash = true
                    }
                }
            }
            if clash { continue }
            rules.insert(contentsOf: addition.rules, at: position)
            if addition.before == nil { addedAtTop[index] = position + addition.rules.count }
            endpoints[index] = endpoint.replacingRules(rules)
        }
        return (endpoints, problems)
    }
}
