/// Where a rule's `proxy` sends the request it answers: the upstream server Mishap was started
/// with (`proxy: upstream`, with `--upstream`), or a URL of the rule's own. The upstream's
/// answer is the response, with the rule's `headers`, `delay`, `dribble` and `fault` on top.
public enum ProxyTarget: Sendable, Equatable {
    /// The server given with `--upstream` (`ServiceOptions.upstream`).
    case serverUpstream
    /// A base URL of the rule's own (`http://127.0.0.1:9000`, `https://api.example.com/v2`).
    case url(String)

    /// Where a plan of a rule with this target sends the request.
    var destination: ResponsePlan.Destination {
        switch self {
        case .serverUpstream: .serverUpstream
        case .url(let url): .url(url)
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

    /// The host (lowercased; an IPv6 address in brackets) and port (the scheme's default when
    /// none is written) of an `http` or `https` URL; nil when it has neither form.
    public static func authority(of url: String) -> (host: String, port: UInt16)? {
        let lowered = url.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lowered.hasPrefix($0) }) else { return nil }
        let authority = lowered.dropFirst(scheme.count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostAndPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? authority[...]
        var host = hostAndPort
        var port: Substring = ""
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.firstIndex(of: "]") else { return nil }
            host = hostAndPort[...close]
            port = hostAndPort[hostAndPort.index(after: close)...].drop { $0 == ":" }
        } else if let colon = hostAndPort.lastIndex(of: ":") {
            host = hostAndPort[..<colon]
            port = hostAndPort[hostAndPort.index(after: colon)...]
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        guard !host.isEmpty else { return nil }
        if port.isEmpty { return (String(host), scheme == "https://" ? 443 : 80) }
        guard let number = UInt16(port) else { return nil }
        return (String(host), number)
    }

    /// Whether a host (as `authority(of:)` gives it) is this machine by definition: `localhost`
    /// and `*.localhost`, 127.0.0.0/8, `::1`, and the unspecified addresses `0.0.0.0` and `::`,
    /// which reach this machine when connected to.
    public static func isLoopback(host: String) -> Bool {
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        if host == "[::1]" || host == "[::]" || host == "[0:0:0:0:0:0:0:1]" || host == "0.0.0.0" { return true }
        if host.hasPrefix("[::ffff:") { return isLoopback(host: String(host.dropFirst(8).dropLast())) }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
