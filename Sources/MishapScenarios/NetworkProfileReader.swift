import MishapEngine

/// Network profiles given as text: the body of `PUT /__mishap/network` (JSON, or YAML), read as
/// a scenario file's `network:` is, with its problems located.
public enum NetworkProfileReader {
    /// A preset's name (`"edge"`), `{"preset": "edge"}`, or a profile's keys (which may start
    /// from a preset and change some of it). A duration without a unit counts `bare` (seconds,
    /// as every admin call reads one); `offline` only where `allowOffline`. Problems are located
    /// in `name` (`body:1:12`), naming the key.
    public static func read(text: String, name: String, allowOffline: Bool,
                            bare: DurationText.BareUnit = .seconds) -> Result<NetworkProfile, ScenarioError> {
        let root: YAMLNode?
        do {
            root = try YAMLComposer.compose(text)
        } catch {
            return .failure(ScenarioError(diagnostics: [ScenarioLoader.yamlDiagnostic(error, text: text, file: name)]))
        }
        guard let root else {
            return .failure(ScenarioError(diagnostics: [ScenarioDiagnostic(
                file: name, line: 1, column: 1,
                message: "a network profile is a preset's name or a mapping, like {\"preset\": \"edge\"}; this one is empty")]))
        }
        var compiler = FileCompiler(displayPath: name, bodyFiles: BodyFileResolver(directory: ".", root: nil))
        let profile = compiler.compileNetwork(root, bare: bare, allowOffline: allowOffline)
        guard let profile, compiler.diagnostics.isEmpty else {
            return .failure(ScenarioError(diagnostics: compiler.diagnostics))
        }
        return .success(profile)
    }
}
