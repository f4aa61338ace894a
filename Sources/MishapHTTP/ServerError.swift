/// Why the server could not start.
public enum ServerError: Error, CustomStringConvertible {
    /// The host is neither an address nor a name that resolves.
    case unresolvableHost(String)
    /// libmicrohttpd refused to start, typically because the port is taken.
    case startFailed(host: String, port: UInt16, reason: String)

    public var description: String {
        switch self {
        case .unresolvableHost(let host):
            return "cannot resolve host '\(host)'"
        case .startFailed(let host, let port, let reason):
            return "cannot listen on \(host):\(port): \(reason)"
        }
    }
}
