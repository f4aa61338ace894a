import MishapEngine

/// Reads an OpenAPI 3.0 or 3.1 description (YAML or JSON, which is YAML) with the scenario
/// files' own reader, and compiles its operations' parameters and JSON request bodies into a
/// `RequestContract` (`mishap serve --openapi FILE`). Problems are located (`file:line:column`);
/// keywords that are not checked come back as warnings, one per keyword.
public enum OpenAPILoader {
    /// The largest description read, in bytes (the scenario files' limit).
    public static let maximumFileSize = YAMLLimits.maximumFileSize
    /// The methods an operation may have in a path item.
    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// A description compiled, with a warning for each keyword it has that is not checked.
    public struct Loaded: Sendable {
        public let contract: RequestContract
        public let warnings: [ScenarioDiagnostic]
    }

    /// Reads and compiles the description at `path`.
    public static func load(path: String) throws(ScenarioError) -> Loaded {
        switch ScenarioLoader.readRegularFile(path, limit: maximumFileSize, what: "an API description") {
        case .success(let bytes):
            return try load(text: String(decoding: bytes, as: UTF8.self), name: path)
        case .failure(let problem):
            throw ScenarioError(diagnostics: [ScenarioDiagnostic(file: path, line: 1, column: 1,
                                                                 message: "the API description \(problem.message)")])
        }
    }

    /// Compiles the description `text` (`name` stands for its file in messages).
    public static func load(text: String, name: String) throws(ScenarioError) -> Loaded {
        let composed: YAMLNode?
        do {
            composed = try YAMLComposer.compose(text)
        } catch {
            throw ScenarioError(diagnostics: [ScenarioLoader.yamlDiagnostic(error, text: text, file: name)])
        }
        guard let root = composed else {
            throw ScenarioError(diagnostics: [ScenarioDiagnostic(file: name, line: 1, column: 1,
                                                                 message: "the API description holds no document")])
        }
        var compiler = OpenAPISchemaCompiler(root: root, file: name)
        guard case .mapping(let document) = root else {
            compiler.error("an API description must be a mapping with an 'openapi' key", at: root)
            throw ScenarioError(diagnostics: compiler.errors)
        }
        if let swagger = document.member("swagger") {
            compiler.error("this is a Swagger \(swagger.scalar?.string ?? "2.0") description; only OpenAPI 3.0 and 3.1 are read "
                + "(convert it first, for example with swagger2openapi)", at: swagger)
            throw ScenarioError(diagnostics: compiler.errors)
        }
        guard let version = document.member("openapi") else {
            compiler.error("an API description needs an 'openapi' key (3.0.x or 3.1.x)", at: root)
            throw ScenarioError(diagnostics: compiler.errors)
        }
        guard let text = version.scalar?.string, text.hasPrefix("3.0") || text.hasPrefix("3.1") else {
            compiler.error("openapi '\(version.scalar?.string ?? "?")' is not read; only 3.0.x and 3.1.x are", at: version)
            throw ScenarioError(diagnostics: compiler.errors)
        }
        var operations: [OperationContract] = []
        if let paths = document.member("paths") {
            guard case .mapping(let items) = paths else {
                compiler.error("paths must be a mapping", at: paths)
                throw ScenarioError(diagnostics: compiler.errors)
            }
            for (templateNode, item) in items.pairs {
                guard let template = templateNode.scalar?.string, template.hasPrefix("/") else {
                    compiler.error("a path must start with '/'", at: templateNode)
                    continue
                }
                operations += compiler.operations(template: template, item: item)
            }
        }
        guard compiler.errors.isEmpty else { throw ScenarioError(diagnostics: compiler.errors) }
        let contract = RequestContract(source: name, basePath: basePath(document), operations: operations)
        return Loaded(contract: contract, warnings: warnings(compiler))
    }

    /// The path of the first server's URL (`https://api.example.com/v1` → `/v1`), its
    /// `{variables}` given their defaults; empty for none.
    static func basePath(_ document: YAMLNode.Mapping) -> String {
        guard case .sequence(let servers) = document.member("servers"), case .mapping(let server) = servers.first,
              var url = server.member("url")?.scalar?.string else { return "" }
        if case .mapping(let variables) = server.member("variables") {
            for (nameNode, variable) in variables.pairs {
                guard let name = nameNode.scalar?.string, case .mapping(let fields) = variable,
                      let value = fields.member("default")?.scalar?.string else { continue }
                url = url.replacing("{\(name)}", with: value)
            }
        }
        if let scheme = url.firstRange(of: "://") {
            let rest = url[scheme.upperBound...]
            url = rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? ""
        }
        guard url.hasPrefix("/") else { return "" }
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    /// One warning per keyword not checked, at its first use, saying how often it is used.
    static func warnings(_ compiler: OpenAPISchemaCompiler) -> [ScenarioDiagnostic] {
        compiler.unchecked.sorted { ($0.value.mark.line, $0.value.mark.column) < ($1.value.mark.line, $1.value.mark.column) }
            .map { keyword, use in
                ScenarioDiagnostic(file: compiler.file, line: use.mark.line, column: use.mark.column,
                                   message: "warning: \(keyword) is not checked in requests (\(use.count) use\(use.count == 1 ? "" : "s"))")
            }
    }
}
