/// The path a request is served as, from the target libmicrohttpd hands over (decoded, its
/// query already split off).
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
    /// them. Only the first byte is looked at for an origin-form target.
    static func path(_ url: UnsafePointer<CChar>) -> String {
        url.pointee == CChar(UInt8(ascii: "/")) ? String(cString: url) : path(of: String(cString: url))
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
