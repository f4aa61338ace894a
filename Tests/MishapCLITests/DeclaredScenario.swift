import Foundation
import MishapTestSupport

/// What a block-style scenario file declares, read line by line: the line of `endpoint:` and the
/// `  - name: X` rule names in order.
struct DeclaredScenario {
    var endpointLine = 0
    var ruleNames: [String] = []

    /// The repository's default scenario files, in path order, and their endpoints.
    static let defaultFiles = [("isUserNameAvailable.yaml", "GET /isUserNameAvailable"), ("login.yaml", "POST /login"),
                               ("me.yaml", "GET /me"), ("search.yaml", "GET /search"), ("token.yaml", "POST /token")]

    /// The repository's default scenario files, in path order.
    static var defaults: [DeclaredScenario] {
        get throws {
            try defaultFiles.map { try DeclaredScenario(path: Paths.scenarios + "/" + $0.0) }
        }
    }

    init(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("endpoint:") && endpointLine == 0 { endpointLine = index + 1 }
            if line.hasPrefix("  - name: ") {
                ruleNames.append(line.dropFirst("  - name: ".count).split(separator: " ").first.map(String.init) ?? "")
            }
        }
    }
}
