/// Where requests no rule answers go (`--upstream`), and how long Mishap waits for them.
public struct UpstreamOptions: Sendable, Equatable {
    /// The upstream's base URL: `http://` or `https://`, a host, a port or not, a path prefix or
    /// not (`http://127.0.0.1:9000`, `https://api.example.com/v2`).
    public var url: String
    /// How long one request may take, connecting included, before it is answered 504.
    public var timeoutMilliseconds: Int
    /// A file of CA certificates (PEM) to trust for an HTTPS upstream instead of the system's.
    public var caFile: String?

    public static let defaultTimeoutMilliseconds = 30_000

    public init(url: String, timeoutMilliseconds: Int = UpstreamOptions.defaultTimeoutMilliseconds, caFile: String? = nil) {
        self.url = url
        self.timeoutMilliseconds = timeoutMilliseconds
        self.caFile = caFile
    }

    /// Why `url` cannot be an upstream, or nil when it can: an absolute `http` or `https` URL
    /// with a host, and no query, fragment or user name.
    public static func problem(with url: String) -> String? {
        let lowered = url.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lowered.hasPrefix($0) }) else {
            return "must start with http:// or https://"
        }
        let rest = url.dropFirst(scheme.count)
        let authority = rest.prefix { $0 != "/" }
        if authority.isEmpty { return "has no host" }
        if authority.contains("@") { return "must not hold a user name or password" }
        if url.contains("?") || url.contains("#") { return "must not hold a query or a fragment" }
        if url.contains(where: { $0 == " " || $0.isNewline || ($0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false) }) {
            return "must not hold spaces or control characters"
        }
        return nil
    }
}
