import MishapEngine
import MishapScenarios

/// Stands in for MishapScenarios' reader until it lands (removed then): presets, and a few keys.
enum NetworkProfileReader {
    static func read(text: String, name: String, allowOffline: Bool) -> Result<NetworkProfile, ScenarioError> {
        func fail(_ message: String) -> Result<NetworkProfile, ScenarioError> {
            .failure(ScenarioError(diagnostics: [ScenarioDiagnostic(file: name, line: 1, column: 1, message: message)]))
        }
        guard let value = JSONValue.parse(Array(text.utf8)) else { return fail("not JSON") }
        if case .string(let preset) = value {
            return NetworkPresets.named(preset).map { .success($0) } ?? fail("unknown preset '\(preset)'")
        }
        guard case .object(let members) = value else { return fail("a profile is an object") }
        var latency: NetworkLatency?, loss = 0.0, offline: Int?, down: Int?
        for (key, member) in members {
            switch (key, member) {
            case ("preset", .string(let preset)):
                return NetworkPresets.named(preset).map { .success($0) } ?? fail("preset: unknown preset '\(preset)'")
            case ("latency", .string(let text)):
                guard case .success(let ms) = DurationText.milliseconds(text) else { return fail("latency: bad duration") }
                latency = .fixed(ms)
            case ("loss", .number(let text)):
                guard let fraction = Double(text), (0...1).contains(fraction) else { return fail("loss: a fraction 0...1") }
                loss = fraction
            case ("offline", .string(let text)):
                guard allowOffline, case .success(let ms) = DurationText.milliseconds(text) else { return fail("offline: bad duration") }
                offline = ms
            case ("bandwidth", .object(let rates)):
                for (direction, rate) in rates where direction == "down" {
                    if case .number(let text) = rate { down = Int(text) }
                }
            default:
                return fail("\(key): unknown key or bad value")
            }
        }
        return .success(NetworkProfile(latency: latency, downBytesPerSecond: down, loss: loss, offlineMilliseconds: offline))
    }
}
