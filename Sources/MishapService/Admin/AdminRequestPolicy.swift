import MishapEngine
import MishapSupport

/// Which admin calls a web page in the developer's browser may not make. Mishap listens on
/// loopback, and so does every page the browser opens: without these checks, any site could
/// add rules (a `fetch` with `mode: "no-cors"` needs no preflight) or, through a DNS name it
/// rebinds to 127.0.0.1, read the journal with the app's tokens in it.
///
/// - **Host** (DNS rebinding): an admin call, the dashboard's pages included, must name this
///   machine: no `Host` (HTTP/1.0), an IP address, `localhost` or a `*.localhost` name, or a
///   name given with `--admin-host`. A rebinding page needs a DNS name of its own, which is none
///   of those. With an admin token this check is left out: a rebound page has no token.
/// - **Origin** (cross-site request forgery): a call that changes something (any method but
///   `GET`, `HEAD` and `OPTIONS`) whose `Origin` is not this server's own (the scheme and the
///   `Host` it was sent to), nor one given with `--admin-origin`, is refused; so is
///   `Origin: null` (a sandboxed page, a form from a `file:` page), and a browser's
///   `Sec-Fetch-Site: cross-site` or `same-site` (another port of localhost is the same site).
///   A call without `Origin`, as curl, scripts and test runners send, is not affected.
public struct AdminRequestPolicy: Sendable, Equatable {
    /// Host names admin calls may name besides loopback ones and addresses, lowercased,
    /// without a trailing dot (`--admin-host`).
    public let hosts: Set<String>
    /// Origins that may make admin calls that change something, besides the server's own,
    /// lowercased (`--admin-origin`).
    public let origins: Set<String>

    /// Allows `hosts` (names, as `Host` gives them without the port) and `origins`
    /// (`scheme://host[:port]`) besides what is always allowed.
    public init(hosts: [String] = [], origins: [String] = []) {
        self.hosts = Set(hosts.map(Self.normalizedHost))
        self.origins = Set(origins.map { $0.lowercased() })
    }

    /// Why `--admin-host NAME` cannot be taken, or nil: a host name, without a port or a scheme.
    public static func problem(withHost name: String) -> String? {
        guard !name.isEmpty, name.utf8.allSatisfy({ isHostByte($0) }), !name.contains(":") else {
            return "--admin-host takes a host name as clients send it in Host, without a port or scheme (mishap.test): '\(name)'"
        }
        return nil
    }

    /// Why `--admin-origin ORIGIN` cannot be taken, or nil: `http://` or `https://`, a host,
    /// a port or not, and nothing after (as browsers send `Origin`).
    public static func problem(withOrigin origin: String) -> String? {
        guard originParts(origin) != nil, !origin.hasSuffix(":") else {
            return "--admin-origin takes an origin as browsers send it, scheme://host[:port] without a path (http://localhost:3000): '\(origin)'"
        }
        return nil
    }

    /// The answer that refuses `request`, an admin call, or nil when it may go on. `tokenSet`:
    /// the admin API has a token, which a rebound page cannot have (the Host check is left out).
    func refusal(for request: Request, tokenSet: Bool) -> ResponsePlan? {
        let host = request.headerValue("Host")
        if !tokenSet, let host, !allows(host: host) {
            let name = Self.hostName(host)
            return AdminAPI.error(403, "admin calls must be sent to this machine by a loopback name or an address: Host '\(host)' "
                + "is neither (a page on another site can reach 127.0.0.1 through a DNS name it controls); if you reach "
                + "Mishap by that name, start it with --admin-host \(name.isEmpty ? "NAME" : name)")
        }
        switch request.method {
        case "GET", "HEAD", "OPTIONS": return nil
        default: break
        }
        let origin = request.headerValue("Origin")
        if let origin, origins.contains(origin.lowercased()) { return nil }
        if let site = request.headerValue("Sec-Fetch-Site")?.lowercased(), site == "cross-site" || site == "same-site" {
            return Self.crossOrigin("the browser says it comes from another site (Sec-Fetch-Site: \(site)) with Origin "
                + (origin.map { "'\($0)'" } ?? "not sent"), origin: origin)
        }
        guard let origin else { return nil }
        if origin.lowercased() == "null" {
            return Self.crossOrigin("it comes from a page with no origin (Origin: null: a sandboxed frame, a file, a redirect)", origin: nil)
        }
        guard let host, Self.isSameOrigin(origin, host: host) else {
            return Self.crossOrigin("Origin '\(origin)' is not this server's" + (host.map { " (Host '\($0)')" } ?? ""), origin: origin)
        }
        return nil
    }

    /// The 403 for a change asked for by a page of another origin.
    private static func crossOrigin(_ why: String, origin: String?) -> ResponsePlan {
        AdminAPI.error(403, "admin calls that change something are refused from web pages of other origins: \(why); "
            + "a page you visit may not drive Mishap (cross-site request forgery). Calls without Origin (curl, scripts, "
            + "tests) are not affected; to let a page of yours make them, start Mishap with --admin-origin "
            + (origin.map { $0.lowercased() == "null" ? "ORIGIN" : $0 } ?? "ORIGIN"))
    }

    /// Whether a `Host` value names this machine: an address, a loopback name, or a name allowed.
    func allows(host: String) -> Bool {
        let name = Self.hostName(host)
        if name.isEmpty { return true }
        if name.hasPrefix("[") { return true }  // An IPv6 address: no DNS name.
        let normalized = Self.normalizedHost(name)
        if normalized == "localhost" || normalized.hasSuffix(".localhost") { return true }
        if normalized.utf8.allSatisfy({ ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: ".") }) {
            return true  // An IPv4 address (no top-level domain is all digits).
        }
        return hosts.contains(normalized)
    }

    /// A `Host` value without its port: `localhost` of `localhost:8080`, `[::1]` of `[::1]:8080`.
    static func hostName(_ host: String) -> String {
        let trimmed = host.trimmingASCIIWhitespace()
        if trimmed.hasPrefix("["), let close = trimmed.firstIndex(of: "]") { return String(trimmed[...close]) }
        if let colon = trimmed.lastIndex(of: ":") { return String(trimmed[..<colon]) }
        return String(trimmed)
    }

    /// A name as compared: lowercased, without the trailing dot of a fully qualified name.
    static func normalizedHost(_ name: String) -> String {
        var lowered = name.lowercased()
        if lowered.hasSuffix(".") { lowered.removeLast() }
        return lowered
    }

    /// Whether `origin` is the origin a page of this server has, given the `Host` the request
    /// was sent to: the same host and port (a missing port is the scheme's default). The scheme
    /// is not compared: one port serves one scheme.
    static func isSameOrigin(_ origin: String, host: String) -> Bool {
        guard let parts = originParts(origin) else { return false }
        let defaultPort = parts.scheme == "https" ? "443" : "80"
        let name = hostName(host)
        let hostPort = host.trimmingASCIIWhitespace().dropFirst(name.count).drop { $0 == ":" }
        return normalizedHost(name) == normalizedHost(parts.host)
            && (hostPort.isEmpty ? defaultPort : String(hostPort)) == (parts.port ?? defaultPort)
    }

    /// The scheme, host and port of `scheme://host[:port]`; nil when it is not an origin.
    static func originParts(_ origin: String) -> (scheme: String, host: String, port: String?)? {
        let lowered = origin.lowercased()
        guard let scheme = ["http", "https"].first(where: { lowered.hasPrefix($0 + "://") }) else { return nil }
        let authority = origin.dropFirst(scheme.count + 3)
        guard !authority.isEmpty, authority.utf8.allSatisfy({ isHostByte($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "[")
            || $0 == UInt8(ascii: "]") }) else { return nil }
        let name = hostName(String(authority))
        guard !name.isEmpty else { return nil }
        let port = authority.dropFirst(name.count).drop { $0 == ":" }
        guard port.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return (scheme, name, port.isEmpty ? nil : String(port))
    }

    /// Letters, digits, `-`, `.` and `_`: what a host name is made of.
    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
