import MishapEngine
import MishapSupport

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
        let started = ContinuousClock.now
        let shown = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        guard let root = FileSystem.realPath(directory) else {
            throw ScenarioError(diagnostics: [ScenarioDiagnostic(file: shown, line: 1, column: 1, message: "scenarios folder not found")])
        }
        guard FileSystem.isDirectory(root) else {
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
            let bytes: [UInt8]
            switch readScenarioFile(full) {
            case .success(let read): bytes = read
            case .failure(let problem):
                diagnostics.append(ScenarioDiagnostic(file: display, line: 1, column: 1, message: problem.message))
                continue
            }
            guard let text = String(validUTF8: bytes) else {
                let place = firstInvalidUTF8(bytes)
                diagnostics.append(ScenarioDiagnostic(file: display, line: place.line, column: place.column,
                                                      message: "is not UTF-8 text: byte 0x\(String(place.byte, radix: 16, uppercase: true)) cannot start or continue a character here"))
                continue
            }
            // Everything before the last slash (splitting the path and joining all but its last
            // part gave the same, for 40,000 instructions a file).
            let folder = full.lastIndex(of: "/").map { String(full[..<$0]) } ?? ""
            sources.append((display, folder, text))
        }
        if sources.isEmpty && diagnostics.isEmpty {
            diagnostics.append(ScenarioDiagnostic(file: shown, line: 1, column: 1,
                message: "no scenario files (*.yaml, *.yml, *.json) in this folder"))
        }
        var set = try compile(sources.map { ($0.display, BodyFileResolver(directory: $0.directory, root: root), $0.text) },
                              earlier: diagnostics, previous: previous)
        set.loadDuration = started.duration(to: .now)
        return set
    }

    /// Compiles scenario text that has no folder (bodies then cannot come from files).
    /// `name` stands for the file in messages.
    public static func load(yaml text: String, name: String = "inline.yaml", previous: ScenarioSet? = nil) throws(ScenarioError) -> ScenarioSet {
        let started = ContinuousClock.now
        var set = try compile([(name, BodyFileResolver(directory: ".", root: nil), text)], earlier: [], previous: previous)
        set.loadDuration = started.duration(to: .now)
        return set
    }

    /// Compiles rules added while the server runs (`POST /__mishap/rules`): one file's text,
    /// whose endpoints need not exist in the files, using the state `state` declares (the text
    /// may not declare state, nor add rules with `extends:`). `previous`, the same text compiled
    /// before a reload, keeps its cycles' positions. `proxyProblem` says why a `proxy` URL
    /// cannot be used (it points at the server adding the rules), reported where it is written.
    public static func loadRuntime(yaml text: String, name: String = "body", state: StateStore?,
                                   previous: ScenarioSet? = nil,
                                   proxyProblem: (@Sendable (String) -> String?)? = nil) throws(ScenarioError) -> ScenarioSet {
        try compile([(name, BodyFileResolver(directory: ".", root: nil), text)], earlier: [], previous: previous,
                    runtime: RuntimeCompile(state: state, proxyProblem: proxyProblem))
    }

    /// What compiling runtime rules changes: the state comes from the files already loaded, and
    /// `proxy` URLs are checked against the running server.
    struct RuntimeCompile {
        let state: StateStore?
        var proxyProblem: (@Sendable (String) -> String?)? = nil
    }

    private static func compile(
        _ sources: [(display: String, bodyFiles: BodyFileResolver, text: String)],
        earlier: [ScenarioDiagnostic],
        previous: ScenarioSet?,
        runtime: RuntimeCompile? = nil
    ) throws(ScenarioError) -> ScenarioSet {
        var diagnostics = earlier
        var warnings: [ScenarioDiagnostic] = []
        var counters: [String: CycleCounter] = [:]
        var quotas: [String: QuotaCounter] = [:]
        var endpoints: [Endpoint] = []
        var declared: [String: String] = [:]
        var extensions: [EndpointExtension] = []

        // Every file is read first: state declared in one file is used in others.
        var parsed: [(source: (display: String, bodyFiles: BodyFileResolver, text: String), root: YAMLNode, compiler: FileCompiler)] = []
        var declarations: [StateDeclaration] = []
        var stateNames: [String: String] = [:]
        for source in sources {
            let root: YAMLNode?
            do {
                root = try YAMLComposer.compose(source.text)
            } catch {
                diagnostics.append(yamlDiagnostic(error, text: source.text, file: source.display))
                continue
            }
            guard let root else {
                diagnostics.append(emptyFileDiagnostic(source.text, file: source.display))
                continue
            }
            var compiler = FileCompiler(displayPath: source.display, bodyFiles: source.bodyFiles,
                                        previousCounters: previous?.cycleCounters ?? [:])
            compiler.previousQuotas = previous?.quotaCounters ?? [:]
            compiler.proxyProblem = runtime?.proxyProblem
            if runtime != nil, case .mapping(let file) = root, let key = file.first(where: { $0.key.scalar?.string == "state" })?.key {
                compiler.error("rules added at runtime use the state the scenario files declare; declare it there", at: key)
            }
            for (declaration, key) in runtime == nil ? compiler.stateDeclarations(root) : [] {
                if let first = stateNames[declaration.name] {
                    compiler.error("state value '\(declaration.name)' is already declared at \(first)", at: key)
                    continue
                }
                stateNames[declaration.name] = declaration.location
                declarations.append(declaration)
            }
            parsed.append((source, root, compiler))
        }
        if let runtime { declarations = runtime.state?.declarations ?? [] }
        var slots: [String: FileCompiler.DeclaredState] = [:]
        for (slot, declaration) in declarations.enumerated() {
            slots[declaration.name] = FileCompiler.DeclaredState(slot: slot, kind: declaration.kind, location: declaration.location)
        }

        let unreadFiles = sources.count > parsed.count || !earlier.isEmpty
        for (source, root, first) in parsed {
            var compiler = first
            compiler.state = slots
            compiler.stateMayBeIncomplete = unreadFiles
            for (endpoint, node) in compiler.compileFile(root) {
                let key = "\(endpoint.method) \(endpoint.path)"
                if let first = declared[key] {
                    compiler.error("endpoint '\(key)' is already declared at \(first)", at: node)
                    continue
                }
                declared[key] = "\(source.display):\(node.mark.line):\(node.mark.column)"
                endpoints.append(endpoint)
            }
            counters.merge(compiler.cycleCounters) { first, _ in first }
            quotas.merge(compiler.quotaCounters) { first, _ in first }
            extensions += compiler.extensions
            // An empty node at the very end is placed on the line after the last when the text
            // has no final line break; the problem is at the end of the last line.
            if !compiler.diagnostics.isEmpty {
                let end = YAMLLimits.end(of: source.text)
                for index in compiler.diagnostics.indices where compiler.diagnostics[index].line > end.line {
                    (compiler.diagnostics[index].line, compiler.diagnostics[index].column) = (end.line, end.column)
                }
            }
            // Problems are found in compile order, not file order; report them as a reader meets them.
            warnings += compiler.warnings
            diagnostics += compiler.diagnostics.enumerated().sorted {
                ($0.element.line, $0.element.column, $0.offset) < ($1.element.line, $1.element.column, $1.offset)
            }.map(\.element)
            if let unreported = compiler.unreported {
                diagnostics.append(ScenarioDiagnostic(file: source.display, line: unreported.line, column: unreported.column,
                    message: "\(unreported.count) more problem(s) in this file not shown (at most \(FileCompiler.maximumDiagnostics) are); the first is here"))
            }
        }
        if runtime != nil, let first = extensions.first {
            diagnostics.append(ScenarioDiagnostic(file: first.file, line: first.targetNode.mark.line, column: first.targetNode.mark.column,
                message: "rules added at runtime declare their endpoint with 'endpoint:' (they are tried before the files' rules)"))
        }
        if diagnostics.isEmpty && !extensions.isEmpty {
            let placed = placing(extensions, into: endpoints)
            endpoints = placed.endpoints
            diagnostics += placed.problems
        }
        guard diagnostics.isEmpty else {
            // One line per problem, whatever text a message quotes.
            throw ScenarioError(diagnostics: diagnostics.map { diagnostic in
                var diagnostic = diagnostic
                diagnostic.message = YAMLLimits.oneLine(diagnostic.message)
                return diagnostic
            })
        }
        var set = ScenarioSet(endpoints: endpoints, files: sources.map(\.display), cycleCounters: counters)
        set.quotaCounters = quotas
        if let runtime {
            set.state = runtime.state
        } else if !declarations.isEmpty {
            // Unchanged declarations keep their values: the same store when all are unchanged.
            if let kept = previous?.state, kept.declarations == declarations {
                set.state = kept
            } else {
                set.state = StateStore(declarations: declarations, carryingOver: previous?.state, now: MonotonicClock.milliseconds())
            }
        }
        set.warnings = (ScenarioDiagnostic.capped(warnings) + RuleReachability.warnings(endpoints)).map { warning in
            var warning = warning
            warning.message = YAMLLimits.oneLine(warning.message)
            return warning
        }
        return set
    }

    /// The problem of a file with no YAML document: refused as a file of only `---` is, so one
    /// caught empty while it is written (or truncated by mistake) does not load as no endpoints.
    static func emptyFileDiagnostic(_ text: String, file: String) -> ScenarioDiagnostic {
        let onlyComments = text.split(whereSeparator: \.isNewline).allSatisfy { line in
            let content = line.drop(while: \.isWhitespace)
            return content.isEmpty || content.hasPrefix("#")
        }
        let what = text.isEmpty ? "is empty (0 bytes)"
            : onlyComments ? "holds only comments and blank lines" : "holds no YAML document"
        return ScenarioDiagnostic(file: file, line: 1, column: 1, message: "a scenario file must be a mapping; this one \(what)")
    }

    /// A YAML error of `text`, located (line and column at least 1, whatever the parser says).
    static func yamlDiagnostic(_ error: YAMLError, text: String, file: String) -> ScenarioDiagnostic {
        func located(_ line: Int, _ column: Int, _ message: String) -> ScenarioDiagnostic {
            ScenarioDiagnostic(file: file, line: max(1, line), column: max(1, column),
                               message: message.isEmpty ? "YAML syntax error" : message)
        }
        switch error {
        case .scanner(let problem, let mark, let context),
             .parser(let problem, let mark, let context),
             .composer(let problem, let mark, let context):
            // At the end of a text without a final line break, libyaml counts one line more
            // than there is; the problem is at the end of the last line.
            let end = YAMLLimits.end(of: text)
            let (line, column) = mark.line > end.line ? (end.line, end.column) : (mark.line, mark.column)
            // libyaml releases after 0.2.5 have a nesting limit of their own, above
            // `YAMLLimits.maximumDepth`, that they may reach while looking ahead, before the
            // limit is checked.
            if problem.hasPrefix("Maximum nesting level reached") {
                return located(line, column, YAMLLimits.depthMessage)
            }
            let detail = context.map { "\(problem) \($0.text)" } ?? problem
            let hint = YAMLHints.hint(problem: problem, context: context?.text, line: line, in: text).map { "; \($0)" } ?? ""
            return located(line, column, "YAML syntax: \(detail)\(hint)")
        case .duplicatedKeys(let duplicates, let mark):
            return located(mark.line, mark.column,
                "duplicate key \(duplicates.map { "'\(YAMLLimits.shown($0))'" }.joined(separator: ", ")) in one mapping")
        case .reader(let problem, let offset, let value):
            let violation = YAMLLimits.readerViolation(problem: problem, offset: offset, value: value, in: text)
            return located(violation.line, violation.column, violation.message)
        case .limit(let violation):
            return located(violation.line, violation.column, violation.message)
        case .memory:
            return located(1, 1, "YAML: Memory error")
        }
    }

    /// Where the first byte that is not valid UTF-8 is: its 1-based line and column (in
    /// Unicode scalars), and its value.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> (line: Int, column: Int, byte: UInt8) {
        var line = 1
        var column = 1
        var offset = 0
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                if encoded.count == 1 && encoded.first == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
                offset += encoded.count
            case .error:
                return (line, column, bytes[offset])
            case .emptyInput:
                return (line, column, 0)
            }
        }
    }
}
