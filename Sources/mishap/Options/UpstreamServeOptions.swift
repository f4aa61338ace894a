import ArgumentParser
import MishapEngine
import MishapService
import MishapSupport
import MishapUpstream

/// The upstream options of `serve` (and `start`): where requests no rule answers go.
struct UpstreamServeOptions: ParsableArguments {
    @Option(name: .customLong("upstream"), help: ArgumentHelp("Send requests no rule answers on to this server (http:// or https://, a path prefix or not) and pass its answers back, instead of answering 404.", valueName: "url"))
    var url: String?

    @Option(name: .customLong("upstream-timeout"), help: ArgumentHelp("How long a request sent on to an upstream (--upstream, or a rule's proxy) may take, connecting included, before it is answered 504. " + DurationOption.rule, valueName: "duration"))
    var timeout = DurationOption(seconds: UpstreamOptions.defaultTimeoutMilliseconds / 1000)

    @Option(name: .customLong("upstream-ca"), help: ArgumentHelp("Trust the CA certificates in this PEM file for HTTPS upstreams (--upstream, or a rule's proxy), instead of the system's.", valueName: "path"))
    var caFile: String?

    @Option(name: .customLong("upstream-memory"), help: ArgumentHelp("The most bytes the bodies of upstream answers (--upstream, or a rule's proxy) hold at once, from their first byte received to their last byte sent to a client that may read slowly; an answer that would pass it is stopped and answered 502 saying so. Each answer is also at most 64 MiB.", valueName: "bytes"))
    var memoryBytes: Int = UpstreamClient.defaultMemoryBytes

    /// Why `--upstream` is this Mishap itself, served on `host` and `ports`, or nil: requests no
    /// rule answers would come back to it, again and again.
    func selfProblem(host: String, ports: [Int]) -> String? {
        guard let url, let authority = ProxyTarget.authority(of: url), ports.contains(Int(authority.port)), authority.port != 0,
              ProxyTarget.isLoopback(host: authority.host) || authority.host == host.lowercased() || authority.host == "[\(host.lowercased())]"
        else { return nil }
        return "--upstream \(url) is this Mishap itself (port \(authority.port)): requests no rule answers would come back to it and loop"
    }

    func validate() throws {
        if let url, let problem = ProxyTarget.problem(with: url) {
            throw ValidationError("--upstream \(problem): '\(url)'")
        }
        try timeout.check("--upstream-timeout", lowest: 1)
        guard memoryBytes >= 1 << 20 else { throw ValidationError("--upstream-memory must be at least 1048576 bytes (1 MiB)") }
        if let caFile, FileSystem.readText(caFile) == nil {
            throw ValidationError("--upstream-ca: cannot read '\(caFile)'")
        }
    }

    /// The service's upstream options; nil when none of these options is given. Without
    /// `--upstream`, the timeout and the CA file apply to rules' `proxy` URLs.
    var options: UpstreamOptions? {
        let milliseconds = timeout.milliseconds
        guard url != nil || caFile != nil || milliseconds != UpstreamOptions.defaultTimeoutMilliseconds
            || memoryBytes != UpstreamClient.defaultMemoryBytes else { return nil }
        var options = UpstreamOptions(url: url, timeoutMilliseconds: milliseconds, caFile: caFile)
        options.memoryBytes = memoryBytes
        return options
    }

    /// The same options as arguments, for the server `start` runs.
    var arguments: [String] {
        var arguments = ["--upstream-timeout=\(timeout)", "--upstream-memory=\(memoryBytes)"]
        if let url { arguments.append("--upstream=\(url)") }
        if let caFile { arguments.append("--upstream-ca=\(caFile)") }
        return arguments
    }
}
