/// What an import made and what it left out, printed when it is done.
public struct ImportSummary: Sendable, CustomStringConvertible {
    var title: String
    var version: String
    var openAPIVersion: String
    var file: String
    var directory: String
    public internal(set) var endpoints = 0
    public internal(set) var files = 0
    var fromExamples = 0
    var errorRules = 0
    var variantRules = 0
    var transportRules = 0
    /// What was left out, and why.
    public internal(set) var skipped: [String] = []
    /// Files of the user's own kept in place of generated ones (`--overwrite`).
    public internal(set) var kept: [String] = []
    /// Generated files of an earlier import not made again, removed (`--overwrite`).
    public internal(set) var removed: [String] = []
    /// What `mishap validate` would warn about.
    public internal(set) var warnings: [String] = []

    /// Counts the endpoints of one path file.
    mutating func add(_ imported: [ImportedEndpoint]) {
        for endpoint in imported {
            endpoints += 1
            if endpoint.exampleAnswer { fromExamples += 1 }
            errorRules += endpoint.errorRules
            variantRules += endpoint.variantRules
            transportRules += endpoint.transportFailures.count
        }
    }

    /// The summary as printed: counts, what was removed, kept and skipped, and the validation.
    public var description: String {
        var lines = [
            "Imported \(title) \(version) (OpenAPI \(openAPIVersion)) from \(file) into \(directory):",
            "  \(endpoints) endpoint(s) in \(files) file(s)",
            "  success answers: \(fromExamples) from the description's examples, \(endpoints - fromExamples) made from schemas",
            "  rules answering only when forced: \(errorRules) declared error(s), \(variantRules) decoder variant(s), \(transportRules) transport failure(s)",
        ]
        if !removed.isEmpty { lines.append("  removed (generated before, not now): " + removed.joined(separator: ", ")) }
        if !kept.isEmpty { lines.append("  kept (your own, not generated): " + kept.joined(separator: ", ")) }
        if skipped.isEmpty {
            lines.append("  skipped: nothing")
        } else {
            lines.append("  skipped or left out (\(skipped.count)):")
            lines += skipped.map { "    " + $0 }
        }
        lines += warnings.map { "  " + $0 }
        lines.append("  mishap validate \(directory): valid" + (warnings.isEmpty ? "" : " with \(warnings.count) warning(s)"))
        return lines.joined(separator: "\n")
    }
}
