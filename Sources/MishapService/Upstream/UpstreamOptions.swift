import MishapUpstream

/// Where requests no rule answers go (`--upstream`), and how Mishap calls upstream servers: that
/// one, and the URLs of rules' `proxy`.
public struct UpstreamOptions: Sendable, Equatable {
    /// The upstream's base URL: `http://` or `https://`, a host, a port or not, a path prefix or
    /// not (`http://127.0.0.1:9000`, `https://api.example.com/v2`). Nil: requests no rule
    /// answers are answered 404, and the settings below apply to rules' `proxy` URLs only.
    public var url: String?
    /// How long one request may take, connecting included, before it is answered 504.
    public var timeoutMilliseconds: Int
    /// A file of CA certificates (PEM) to trust for HTTPS upstreams instead of the system's.
    public var caFile: String?

    /// The most bytes the bodies of upstream answers hold at once, from the first received to
    /// the last sent (`--upstream-memory`); a transfer that would pass it is stopped and answered 502.
    public var memoryBytes = UpstreamClient.defaultMemoryBytes

    public static let defaultTimeoutMilliseconds = 30_000

    public init(url: String?, timeoutMilliseconds: Int = UpstreamOptions.defaultTimeoutMilliseconds, caFile: String? = nil) {
        self.url = url
        self.timeoutMilliseconds = timeoutMilliseconds
        self.caFile = caFile
    }
}
