#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A resolved IPv4 or IPv6 address to bind, kept in storage libmicrohttpd can read.
public struct SocketAddress {
    /// The address, as `getaddrinfo` gave it.
    public var storage = sockaddr_storage()
    /// Whether it is an IPv6 address.
    public var isIPv6 = false
    /// The IPv6 any-address (`::`): bound dual-stack, it serves IPv4 clients too, as `::` does on
    /// most servers (phones on Wi-Fi often reach a laptop over IPv4 only).
    public var isIPv6Any = false

    /// Resolves `host` (a literal address or a name) for a passive TCP socket on `port`.
    public init?(host: String, port: UInt16) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let first = result else { return nil }
        defer { freeaddrinfo(result) }
        // Prefer IPv4 when a name resolves to both (localhost), as clients usually try it first.
        var chosen = first
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if entry.pointee.ai_family == AF_INET { chosen = entry; break }
            cursor = entry.pointee.ai_next
        }
        isIPv6 = chosen.pointee.ai_family == AF_INET6
        withUnsafeMutableBytes(of: &storage) { raw in
            raw.copyMemory(from: UnsafeRawBufferPointer(start: chosen.pointee.ai_addr, count: Int(chosen.pointee.ai_addrlen)))
        }
        if isIPv6 {
            let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self).sin6_addr }
            isIPv6Any = withUnsafeBytes(of: address) { $0.allSatisfy { $0 == 0 } }
        }
    }

    /// The address family (`AF_INET` or `AF_INET6`).
    public var family: Int32 { Int32(storage.ss_family) }

    /// Calls `body` with the address as the `sockaddr` the C library and libmicrohttpd take.
    public mutating func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>) -> Result) -> Result {
        withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
    }
}
