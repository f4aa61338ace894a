import Foundation
import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

extension ResponsePlan {
    func header(_ name: String) -> String? {
        headers.first(where: { $0.name.lowercased() == name.lowercased() })?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// What a block-style scenario file declares, read line by line independently of the loader:
/// the line of `endpoint:` and the `  - name: X` rule names in order.
struct DeclaredScenario {
    var endpointLine = 0
    var firstRuleLine = 0
    var ruleNames: [String] = []

    init(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("endpoint:") && endpointLine == 0 { endpointLine = index + 1 }
            if line.hasPrefix("  - name: ") {
                if firstRuleLine == 0 { firstRuleLine = index + 1 }
                let name = line.dropFirst("  - name: ".count).split(separator: " ").first.map(String.init) ?? ""
                ruleNames.append(name)
            }
        }
    }
}
