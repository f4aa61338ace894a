import ArgumentParser
import MishapEngine
import MishapService
import MishapSupport

/// The upstream options of `serve` (and `start`): where requests no rule answers go.
struct UpstreamServeOptions: ParsableArguments {
    @Option(name: .customLong("upstream"), help: ArgumentHelp("Send requests no rule answers on to this server (http:// or https://, a path prefix or not) and pass its answers back, instead of answering 404.", valueName: "url"))
    var url: String?

    @Option(name: .customLong("upstream-timeout"), help: ArgumentHelp("How long a request sent on to an upstream (--upstream, or a rule's proxy) may take, connecting included, before it is answered 504. " + DurationOption.rule, valueName: "duration"))
    var timeout = DurationOption(seconds: UpstreamOptions.defaultTimeoutMilliseconds / 1000)

    @Option(name: .customLong("upstream-ca"), help: ArgumentHelp("Trust the CA certificates in this PEM file for HTTPS upstreams (--upstream, or a rule's proxy), instead of the system's.", valueName: "path"))
    var caFile: String?

    func validate() throws {
        if let url, let problem = ProxyTarget.problem(with: url) {
            throw ValidationError("--upstream \(problem): '\(url)'")
        }
        try timeout.check("--upstream-timeout", lowest: 1)
        if let caFile, FileSystem.readText(caFile) == nil {
            throw ValidationError("--upstream-ca: cannot read '\(caFile)'")
        }
    }

    /// The service's upstream options; nil when none of these options is given. Without
    /// `--upstream`, the timeout and the CA file apply to rules' `proxy` URLs.
    var options: UpstreamOptions? {
        let milliseconds = timeout.milliseconds
        guard url != nil || caFile != nil || milliseconds != UpstreamOptions.defaultTimeoutMilliseconds else { return nil }
        return UpstreamOptions(url: url, timeoutMilliseconds: milliseconds, caFile: caFile)
    }

    /// The same options as arguments, for the server `start` runs.
    var arguments: [String] {
        var arguments = ["--upstream-timeout=\(timeout)"]
        if let url { arguments.append("--upstream=\(url)") }
        if let caFile { arguments.append("--upstream-ca=\(caFile)") }
        return arguments
    }
}
