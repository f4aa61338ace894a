import MishapScenarios

/// `mishap import openapi FILE --out DIR`: an OpenAPI 3.0 or 3.1 description turned into a
/// folder of scenario files that `mishap validate` accepts as written, and a summary of what was
/// made and what was left out.
public enum OpenAPIImporter {
    /// The methods Mishap serves, as OpenAPI names them.
    static let methods = ["get", "put", "post", "delete", "options", "head", "patch"]

    /// Imports `file` into `directory` (see `ImportedFiles` for `overwrite`).
    public static func importDescription(file: String, into directory: String, overwrite: Bool) throws(ImportFailure) -> ImportSummary {
        let description = try DescriptionReader.read(file)
        let resolver = ReferenceResolver(root: .object(description.root))
        var importer = OperationImporter(resolver: resolver)
        var summary = ImportSummary(title: description.title, version: description.version,
                                    openAPIVersion: description.openAPIVersion, file: file, directory: directory)
        var files = ImportedFiles(directory: directory)
        var taken: Set<String> = []
        let header = "\(ImportedFiles.header) from \(Self.oneLine(file)) (\(Self.oneLine(description.title)) \(Self.oneLine(description.version)), OpenAPI \(description.openAPIVersion))."
        for path in description.root["paths"]?.object?.members ?? [] {
            if let problem = Self.unservable(path.key) {
                summary.skipped.append("\(path.key): \(problem)")
                continue
            }
            let item: JSONTree.Object
            do {
                guard let found = try resolver.resolve(path.value).value.object else { continue }
                item = found
            } catch {
                summary.skipped.append("\(path.key): \(Self.describe(error))")
                continue
            }
            var endpoints: [ImportedEndpoint] = []
            for member in item.members {
                let method = member.key.lowercased()
                guard let operation = member.value.object, method != "parameters", method != "servers", !method.hasPrefix("x-"),
                      method != "summary", method != "description" else { continue }
                guard methods.contains(method) else {
                    summary.skipped.append("\(member.key.uppercased()) \(path.key): Mishap serves GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS")
                    continue
                }
                if method == "head" && item["get"] != nil {
                    summary.skipped.append("HEAD \(path.key): its GET endpoint answers HEAD")
                    continue
                }
                do {
                    endpoints.append(try importer.endpoint(method: method.uppercased(), path: path.key, operation: operation))
                } catch .cycle(let chain) {
                    throw ImportFailure("\(file): cyclic $ref: \(chain.joined(separator: " -> ")) (reached from \(method.uppercased()) \(path.key)): it never reaches a schema")
                } catch {
                    summary.skipped.append("\(method.uppercased()) \(path.key): \(Self.describe(error))")
                }
            }
            guard !endpoints.isEmpty else { continue }
            let name = ImportedFiles.fileName(for: path.key, taken: &taken)
            files.files.append((name, Self.pathFile(header: header, endpoints: endpoints)))
            files.files.append((ImportedFiles.transportFolder + "/" + name, Self.transportFile(header: header, source: name, endpoints: endpoints)))
            summary.add(endpoints)
        }
        summary.skipped += importer.notes
        if !importer.generator.unsupported.isEmpty {
            summary.skipped.append("schema keywords not read (values made without them): " + importer.generator.unsupported.sorted().joined(separator: ", "))
        }
        guard summary.endpoints > 0 else {
            throw ImportFailure("\(file): no operation to import" + (summary.skipped.isEmpty ? "" : ":\n  " + summary.skipped.joined(separator: "\n  ")))
        }
        let written = try files.write(overwrite: overwrite)
        summary.kept = written.kept
        summary.removed = written.removed
        summary.files = files.files.count - written.kept.count
        do {
            let loaded = try ScenarioLoader.load(directory: directory)
            summary.warnings = loaded.warnings.map(\.description)
        } catch {
            throw ImportFailure("the files written into \(directory) do not load:\n" + error.description)
        }
        return summary
    }

    /// Why Mishap cannot serve a path as an endpoint, or nil when it can.
    static func unservable(_ path: String) -> String? {
        guard path.hasPrefix("/") else { return "a path must start with /" }
        for segment in path.split(separator: "/") where segment.contains("{") || segment.contains("}") {
            guard segment.hasPrefix("{"), segment.hasSuffix("}"), segment.dropFirst().dropLast().allSatisfy({ $0 != "{" && $0 != "}" }) else {
                return "a template inside a segment ('\(segment)'): Mishap's {name} captures a whole segment"
            }
        }
        return nil
    }

    /// Why a part was skipped, for the summary.
    static func describe(_ problem: Error) -> String {
        switch problem as? ReferenceResolver.Problem {
        case .external(let reference)?: return "external $ref '\(reference)' not followed (only references within the file are); skipped"
        case .missing(let reference)?: return "$ref '\(reference)' names nothing in the description; skipped"
        case .cycle(let chain)?: return "cyclic $ref \(chain.joined(separator: " -> ")); skipped"
        case nil: return "\(problem)"
        }
    }

    /// Text for a comment line: no line breaks.
    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }

    /// What the rules of a generated file are, under its header line.
    private static let explanation = [
        "# Every rule but the last of an endpoint has chance: 0: it answers only when forced, with the",
        "# X-Mishap-Rule header or mishap force. Remove the first line to keep your edits: an import with",
        "# --overwrite replaces only the files that start with it.",
    ]

    /// The scenario file of one path: its operations' endpoints and rules.
    static func pathFile(header: String, endpoints: [ImportedEndpoint]) -> String {
        var flow = FlowYAML()
        var lines = [header] + explanation + ["endpoints:"]
        for endpoint in endpoints {
            lines.append("  - endpoint: " + quoted(endpoint.declaration))
            if !endpoint.about.isEmpty { lines.append("    # " + oneLine(endpoint.about)) }
            lines.append("    rules:")
            for rule in endpoint.rules { lines += rule.lines(indent: 6, flow: &flow) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The file that adds the transport failures to the endpoints of one path through `extends`.
    static func transportFile(header: String, source: String, endpoints: [ImportedEndpoint]) -> String {
        var flow = FlowYAML()
        var lines = [header, "# The transport failures of the endpoints of \(source), added to them through extends: delete",
                     "# this file to leave them out. Each answers only when forced (X-Mishap-Rule or mishap force).", "endpoints:"]
        var anchors = 0
        for endpoint in endpoints {
            lines.append("  - extends: " + quoted(endpoint.declaration))
            lines.append("    rules:")
            // The success body, written once per endpoint and repeated by alias.
            var anchor: String?
            for var rule in endpoint.transportFailures {
                if case .json(let value) = rule.literalBody {
                    if let anchor {
                        rule.body = .aliasedJSON(anchor: anchor)
                    } else {
                        anchors += 1
                        anchor = "success\(anchors)"
                        rule.body = .anchoredJSON(value, anchor: anchor ?? "")
                    }
                }
                lines += rule.lines(indent: 6, flow: &flow)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` as a double-quoted YAML scalar.
    private static func quoted(_ text: String) -> String {
        FlowYAML().oneLine(.string(text))
    }
}
