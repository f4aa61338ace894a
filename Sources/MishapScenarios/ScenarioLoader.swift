import MishapEngine
import Yams

#if canImport(Glibc)
import Glibc
#endif

/// Compiled scenarios: the endpoints of every file, and the files they came from.
public struct ScenarioSet: Sendable {
    public var endpoints: [Endpoint]
    /// The scenario files read, as shown in messages.
    public var files: [String]
    /// The counters of the cycle rules, by what identifies each rule (its endpoint and whole
    /// definition); a reload hands them to the new set so unchanged cycles keep their positions.
    public var cycleCounters: [String: CycleCounter] = [:]

    /// An engine answering with these scenarios.
    public func makeEngine(options: EngineOptions = EngineOptions()) -> Engine {
        Engine(endpoints: endpoints, options: options)
    }
}

/// Loads scenario files (YAML, or JSON, which is YAML too) and compiles them, reporting every
/// problem as `file:line:column: message`.
public enum ScenarioLoader {
    /// File extensions read as scenarios.
    public static let extensions = ["yaml", "yml", "json"]
    /// Folders whose files are response bodies, never scenarios.
    public static let bodyFolderName = "files"

    /// Loads every scenario file under `directory` (sub-folders included, `files/` excepted),
    /// in path order. Cycle rules that are unchanged from `previous` share its counters (their
    /// positions, per session too, carry over); changed or new ones start at the beginning.
    public static func load(directory: String, previous: ScenarioSet? = nil) throws(ScenarioError) -> ScenarioSet {
        let shown = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        guard let resolved = realpath(directory, nil) else {
            throw ScenarioError(diagnostics: [ScenarioDiagnostic(file: shown, line: 1, column: 1, message: "scenarios folder not found")])
        }
        let root = String(cString: resolved)
        free(resolved)
        guard isDirectory(root) else {
            throw ScenarioError(diagnostics: [ScenarioDiagnostic(file: shown, line: 1, column: 1, message: "not a folder")])
        }
        var sources: [(display: String, directory: String, text: String)] = []
        var diagnostics: [ScenarioDiagnostic] = []
        let listing = scenarioFiles(in: root)
        for (relative, problem) in listing.problems {
            diagnostics.append(ScenarioDiagnostic(file: shown == "." ? relative : shown + "/" + relative, line: 1, column: 1, message: problem))
        }
        for relative in listing.files {
            let display = shown == "." ? relative : shown + "/" + relative
            let full = root + "/" + relative
            guard let bytes = BodyFileResolver.contents(of: full) else {
                diagnostics.append(ScenarioDiagnostic(file: display, line: 1, column: 1, message: "cannot be read"))
                continue
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                diagnostics.append(ScenarioDiagnostic(file: display, line: 1, column: 1, message: "is not UTF-8 text"))
                continue
            }
            let folder = full.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            sources.append((display, folder, text))
        }
        if sources.isEmpty && diagnostics.isEmpty {
            diagnostics.append(ScenarioDiagnostic(file: shown, line: 1, column: 1,
                message: "no scenario files (*.yaml, *.yml, *.json) in this folder"))
        }
        return try compile(sources.map { ($0.display, BodyFileResolver(directory: $0.directory, root: root), $0.text) },
                           earlier: diagnostics, previous: previous)
    }

    /// Compiles scenario text that has no folder (bodies then cannot come from files).
    /// `name` stands for the file in messages.
    public static func load(yaml text: String, name: String = "inline.yaml", previous: ScenarioSet? = nil) throws(ScenarioError) -> ScenarioSet {
        try compile([(name, BodyFileResolver(directory: ".", root: nil), text)], earlier: [], previous: previous)
    }

    private static func compile(
        _ sources: [(display: String, bodyFiles: BodyFileResolver, text: String)],
        earlier: [ScenarioDiagnostic],
        previous: ScenarioSet?
    ) throws(ScenarioError) -> ScenarioSet {
        var diagnostics = earlier
        var counters: [String: CycleCounter] = [:]
        var endpoints: [Endpoint] = []
        var declared: [String: String] = [:]
        for source in sources {
            var compiler = FileCompiler(displayPath: source.display, bodyFiles: source.bodyFiles,
                                        previousCounters: previous?.cycleCounters ?? [:])
            let root: Node?
            do {
                // The basic resolver tags nothing: scalars are typed by YAMLScalar, and the default one
                // compiles regular expressions on first use, a large part of startup.
                root = try Yams.compose(yaml: source.text, .basic)
            } catch {
                diagnostics.append(yamlDiagnostic(error, file: source.display))
                continue
            }
            guard let root else { continue }
            for (endpoint, node) in compiler.compileFile(root) {
                let key = "\(endpoint.method) \(endpoint.path)"
                if let first = declared[key] {
                    compiler.error("endpoint '\(key)' is already declared at \(first)", at: node)
                    continue
                }
                declared[key] = "\(source.display):\(node.mark?.line ?? 1):\(node.mark?.column ?? 1)"
                endpoints.append(endpoint)
            }
            counters.merge(compiler.cycleCounters) { first, _ in first }
            // Problems are found in compile order, not file order; report them as a reader meets them.
            diagnostics += compiler.diagnostics.enumerated().sorted {
                ($0.element.line, $0.element.column, $0.offset) < ($1.element.line, $1.element.column, $1.offset)
            }.map(\.element)
        }
        guard diagnostics.isEmpty else { throw ScenarioError(diagnostics: diagnostics) }
        return ScenarioSet(endpoints: endpoints, files: sources.map(\.display), cycleCounters: counters)
    }

    /// A YAML syntax error, located.
    static func yamlDiagnostic(_ error: any Error, file: String) -> ScenarioDiagnostic {
        guard let yamlError = error as? YamlError else {
            return ScenarioDiagnostic(file: file, line: 1, column: 1, message: "\(error)")
        }
        switch yamlError {
        case .scanner(let context, let problem, let mark, _),
             .parser(let context, let problem, let mark, _),
             .composer(let context, let problem, let mark, _):
            let detail = context.map { "\(problem) \($0.text)" } ?? problem
            return ScenarioDiagnostic(file: file, line: mark.line, column: mark.column, message: "YAML syntax: \(detail)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return ScenarioDiagnostic(file: file, line: context.mark.line, column: context.mark.column,
                message: "duplicate key \(duplicates.map { "'\($0)'" }.joined(separator: ", ")) in one mapping")
        case .reader(let problem, let offset, _, _):
            return ScenarioDiagnostic(file: file, line: 1, column: 1, message: "YAML: \(problem)" + (offset.map { " at byte \($0)" } ?? ""))
        default:
            return ScenarioDiagnostic(file: file, line: 1, column: 1, message: "YAML: \(yamlError)")
        }
    }

    /// Scenario files below `root`, relative to it, sorted. Symbolic links are followed only
    /// while they stay inside `root`, and each folder is read once, so a link loop ends.
    static func scenarioFiles(in root: String) -> (files: [String], problems: [(String, String)]) {
        var found: [String] = []
        var problems: [(String, String)] = []
        var visited: Set<String> = [root]
        func walk(_ relative: String) {
            let path = relative.isEmpty ? root : root + "/" + relative
            guard let dir = opendir(path) else { return }
            defer { closedir(dir) }
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
                }
                if name.hasPrefix(".") { continue }
                let child = relative.isEmpty ? name : relative + "/" + name
                let full = root + "/" + child
                var isScenario: Bool {
                    guard name.contains("."), let ext = name.split(separator: ".").last else { return false }
                    return extensions.contains(ext.lowercased())
                }
                if isDirectory(full) {
                    guard name != bodyFolderName else { continue }
                    guard let real = resolve(full), real == root || real.hasPrefix(root + "/") else {
                        problems.append((child, "links to a folder outside the scenarios folder; not read"))
                        continue
                    }
                    if visited.insert(real).inserted { walk(child) }
                } else if isScenario {
                    guard let real = resolve(full), real.hasPrefix(root + "/") else {
                        problems.append((child, "links to a file outside the scenarios folder; not read"))
                        continue
                    }
                    found.append(child)
                }
            }
        }
        walk("")
        return (found.sorted(), problems)
    }

    static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
