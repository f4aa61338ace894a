import MishapScenarios
import Testing

// Checks of the problems a scenario that must not load is reported with, for the loader's tests
// and its fuzzer.

/// The diagnostics of scenario text that must not load.
public func diagnostics(ofYAML yaml: String, name: String = "inline.yaml",
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
public func diagnostics(ofDirectory directory: String,
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
public func expectSingleDiagnostic(
    _ yaml: String, line: Int, column: Int, containing parts: [String], notContaining absent: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectSingle(diagnostics(ofYAML: yaml, sourceLocation: sourceLocation), file: "inline.yaml", line: line, column: column,
                 containing: parts, notContaining: absent, sourceLocation: sourceLocation)
}

/// Checks that the folder `directory` fails with exactly one problem, in `file` at
/// `line`:`column`, whose message contains every one of `parts`.
public func expectSingleDiagnostic(
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
public func expect(
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
