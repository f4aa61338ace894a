import ArgumentParser
import MishapEngine
import MishapService
import MishapSupport

/// The upstream options of `serve` (and `start`): where requests no rule answers go.
struct UpstreamServeOptions: ParsableArguments {
    @Option(name: .customLong("upstream"), help: ArgumentHelp("Send requests no rule answers on to this server (http:// or https://, a path prefix or not) and pass its answers back, instead of answering 404.", valueName: "url"))
    var url: String?

    @Option(name: .customLong("upstream-timeout"), help: ArgumentHelp("How long a request sent on to an upstream (--upstream, or a rule's proxy) may take, connecting included, before it is answered 504.", valueName: "seconds"))
    var timeout: Double = Double(UpstreamOptions.defaultTimeoutMilliseconds) / 1000

    @Option(name: .customLong("upstream-ca"), help: ArgumentHelp("Trust the CA certificates in this PEM file for HTTPS upstreams (--upstream, or a rule's proxy), instead of the system's.", valueName: "path"))
    var caFile: String?

    func validate() throws {
        if let url, let problem = ProxyTarget.problem(with: url) {
            throw ValidationError("--upstream \(problem): '\(url)'")
        }
        guard timeout.isFinite, (0.001...86_400).contains(timeout) else {
            throw ValidationError("--upstream-timeout must be from 0.001 to 86400 seconds")
        }
        if let caFile, FileSystem.readText(caFile) == nil {
            throw ValidationError("--upstream-ca: cannot read '\(caFile)'")
        }
    }

    /// The service's upstream options; nil when none of these options is given. Without
    /// `--upstream`, the timeout and the CA file apply to rules' `proxy` URLs.
    var options: UpstreamOptions? {
        let milliseconds = Int((timeout * 1000).rounded())
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
