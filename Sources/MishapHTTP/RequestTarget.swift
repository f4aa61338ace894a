import MishapSupport

/// The path a request is served as, from the target libmicrohttpd hands over (decoded, its
/// query already split off), without dot segments.
enum RequestTarget {
    /// The request's method: the common ones as literals (no copy, no UTF-8 check; a
    /// C string made into a String cost about 280 instructions), any other as sent.
    static func method(_ method: UnsafePointer<CChar>) -> String {
        func isMethod(_ name: StaticString) -> Bool {
            let bytes = name.utf8Start
            for offset in 0..<name.utf8CodeUnitCount where CChar(bitPattern: bytes[offset]) != method[offset] { return false }
            return method[name.utf8CodeUnitCount] == 0
        }
        if isMethod("GET") { return "GET" }
        if isMethod("POST") { return "POST" }
        if isMethod("PUT") { return "PUT" }
        if isMethod("DELETE") { return "DELETE" }
        return String(cString: method)
    }

    /// The path of `url`: the origin form (`/path`) as it is; the absolute form that clients
    /// configured with an HTTP proxy send (`http://host:port/path`, which RFC 9112 section 3.2.2
    /// says a server must accept) without its scheme and authority, `/` when nothing follows
    /// them. Either way, `.` and `..` segments are removed (RFC 3986 section 5.2.4) after
    /// libmicrohttpd's percent-decoding, so `/a/%2e%2e/b` and `/a/..%2Fb` are `/b` like `/a/../b`:
    /// rules, the session prefix, the admin API and an upstream's base path all see the path the
    /// request stands for, and none can be climbed out of. Only the first byte is looked at to
    /// tell an origin-form target, and a path without dot segments is not copied again.
    static func path(_ url: UnsafePointer<CChar>) -> String {
        guard url.pointee == CChar(UInt8(ascii: "/")) else {
            let path = path(of: String(cString: url))
            return DotSegments.occur(in: path) ? DotSegments.removed(from: path) : path
        }
        return DotSegments.occur(inCString: url) ? DotSegments.removed(from: String(cString: url)) : String(cString: url)
    }

    /// The path of a target: see `path(_:)`. Schemes `http` and `https`, in any case; any other
    /// target (`*`, a bare name) is returned as it is.
    static func path(of target: String) -> String {
        let bytes = target.utf8
        guard bytes.first != UInt8(ascii: "/") else { return target }
        let scheme = bytes.prefix(while: { $0 != UInt8(ascii: ":") })
        let name = String(decoding: scheme, as: UTF8.self).lowercased()
        guard name == "http" || name == "https" else { return target }
        let afterScheme = bytes.dropFirst(scheme.count)
        guard afterScheme.starts(with: "://".utf8) else { return target }
        let authorityAndPath = afterScheme.dropFirst(3)
        guard let slash = authorityAndPath.firstIndex(of: UInt8(ascii: "/")) else { return "/" }
        return String(target[slash...])
    }
}
