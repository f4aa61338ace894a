/// Where a rule's `proxy` sends the request it answers: the upstream server Mishap was started
/// with (`proxy: upstream`, with `--upstream`), or a URL of the rule's own. The upstream's
/// answer is the response, with the rule's `headers`, `delay`, `dribble` and `fault` on top.
public enum ProxyTarget: Sendable, Equatable {
    /// The server given with `--upstream` (`ServiceOptions.upstream`).
    case serverUpstream
    /// A base URL of the rule's own (`http://127.0.0.1:9000`, `https://api.example.com/v2`).
    case url(String)

    /// The base URL a plan names for this target: the URL, or, for the server's upstream,
    /// `ResponsePlan.serverUpstream`, which the service replaces with its own.
    var planned: String {
        switch self {
        case .serverUpstream: ResponsePlan.serverUpstream
        case .url(let url): url
        }
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
