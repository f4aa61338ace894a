import Foundation
import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// The diagnostics of scenario text that must not load.
func diagnostics(ofYAML yaml: String, name: String = "inline.yaml",
                 sourceLocation: SourceLocation = #_sourceLocation) -> [ScenarioDiagnostic] {
    do {
        _ = try ScenarioLoader.load(yaml: yaml, name: name)
        Issue.record("the scenario loaded, but errors were expected", sourceLocation: sourceLocation)
        return []
    } catch {
        return error.diagnostics
    }
}

/// The diagnostics of a scenarios folder that must not load.
func diagnostics(ofDirectory directory: String,
                 sourceLocation: SourceLocation = #_sourceLocation) -> [ScenarioDiagnostic] {
    do {
        _ = try ScenarioLoader.load(directory: directory)
        Issue.record("the folder loaded, but errors were expected", sourceLocation: sourceLocation)
        return []
    } catch {
        return error.diagnostics
    }
}

/// Checks that `yaml` fails with exactly one problem, at `line`:`column`, whose message contains
/// every one of `parts`.
func expectSingleDiagnostic(
    _ yaml: String, line: Int, column: Int, containing parts: [String], notContaining absent: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectSingle(diagnostics(ofYAML: yaml, sourceLocation: sourceLocation), file: "inline.yaml", line: line, column: column,
                 containing: parts, notContaining: absent, sourceLocation: sourceLocation)
}

/// Checks that the folder `directory` fails with exactly one problem, in `file` at
/// `line`:`column`, whose message contains every one of `parts`.
func expectSingleDiagnostic(
    ofDirectory directory: String, file: String, line: Int, column: Int, containing parts: [String],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectSingle(diagnostics(ofDirectory: directory, sourceLocation: sourceLocation), file: file, line: line, column: column,
                 containing: parts, sourceLocation: sourceLocation)
}

/// Checks that `found` is one diagnostic, located and worded as given.
private func expectSingle(
    _ found: [ScenarioDiagnostic], file: String, line: Int, column: Int, containing parts: [String],
    notContaining absent: [String] = [], sourceLocation: SourceLocation
) {
    guard found.count == 1, let diagnostic = found.first else {
        Issue.record("expected exactly one diagnostic, got \(found.count):\n\(found.map(\.description).joined(separator: "\n"))",
                     sourceLocation: sourceLocation)
        return
    }
    expect(diagnostic, file: file, line: line, column: column, containing: parts, notContaining: absent,
           sourceLocation: sourceLocation)
}

/// Checks one diagnostic's location and message.
func expect(
    _ diagnostic: ScenarioDiagnostic, file: String, line: Int, column: Int, containing parts: [String],
    notContaining absent: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(diagnostic.file == file, "\(diagnostic)", sourceLocation: sourceLocation)
    #expect(diagnostic.line == line, "\(diagnostic)", sourceLocation: sourceLocation)
    #expect(diagnostic.column == column, "\(diagnostic)", sourceLocation: sourceLocation)
    for part in parts {
        #expect(diagnostic.message.contains(part), "'\(part)' missing from: \(diagnostic)", sourceLocation: sourceLocation)
    }
    for part in absent {
        #expect(!diagnostic.message.contains(part), "'\(part)' unexpected in: \(diagnostic)", sourceLocation: sourceLocation)
    }
    #expect(diagnostic.description == "\(file):\(line):\(column): \(diagnostic.message)", sourceLocation: sourceLocation)
}

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
