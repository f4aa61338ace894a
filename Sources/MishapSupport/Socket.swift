#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket calls the server makes outside libmicrohttpd, to carry out faults.
public enum Socket {
    /// Sends what the socket takes of `bytes` at once (it may be non-blocking), never raising
    /// SIGPIPE on a closed peer: `MSG_NOSIGNAL` on Linux, `SO_NOSIGPIPE` on the socket elsewhere.
    /// Returns the bytes sent, or -1.
    @discardableResult
    public static func sendOnce(_ socket: Int32, _ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { sendOnce(socket, $0) }
    }

    /// `sendOnce` for bytes in place (a part of a buffer still to write).
    @discardableResult
    public static func sendOnce(_ socket: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        #if os(Linux)
        return send(socket, base, bytes.count, Int32(MSG_NOSIGNAL))
        #else
        var on: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        return send(socket, base, bytes.count, 0)
        #endif
    }

    /// Shuts both directions of the socket down: the peer gets a FIN after what was sent, and a
    /// thread waiting on the socket (libmicrohttpd's) wakes to close it. The descriptor stays
    /// open, its owner's to close.
    public static func shutDown(_ socket: Int32) {
        _ = shutdown(socket, Int32(SHUT_RDWR))
    }

    /// Shuts the socket's reading side down: what the peer sends from now on is dropped, and
    /// with `resetOnClose` the close that follows sends a RST.
    public static func shutDownReading(_ socket: Int32) {
        _ = shutdown(socket, Int32(SHUT_RD))
    }

    /// Disconnects a TCP socket at once (`connect` to `AF_UNSPEC`: the kernel's
    /// `tcp_disconnect`, which sends a RST when linger is 0), without closing the descriptor.
    /// Linux only; elsewhere nothing happens, and the RST waits for the close.
    public static func disconnect(_ socket: Int32) {
        #if os(Linux)
        var address = sockaddr()
        address.sa_family = sa_family_t(AF_UNSPEC)
        _ = Glibc.connect(socket, &address, socklen_t(MemoryLayout<sockaddr>.size))
        #endif
    }

    /// Makes the socket's close send a TCP reset instead of a FIN (linger on, for 0 seconds).
    public static func resetOnClose(_ socket: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(socket, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }
}

extension Socket {
    /// Why a connection could not be made.
    public enum ConnectFailure: Error, CustomStringConvertible {
        case unresolvable(host: String)
        case noSocket
        /// `connect` failed: the reason, e.g. "Connection refused".
        case refused(String)

        public var description: String {
            switch self {
            case .unresolvable(let host): "cannot resolve \(host)"
            case .noSocket: "no socket"
            case .refused(let reason): "nothing accepts connections: \(reason)"
            }
        }
    }

    /// A TCP connection to `host` (a name or an address) and `port`, whose sends and receives
    /// give up after `timeoutMilliseconds`; the caller closes it.
    public static func connect(host: String, port: String, timeoutMilliseconds: Int32) -> Result<Int32, ConnectFailure> {
        var hints = addrinfo()
        #if os(Linux)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, port, &hints, &list) == 0, let first = list else {
            return .failure(.unresolvable(host: host))
        }
        defer { freeaddrinfo(list) }
        let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard descriptor >= 0 else { return .failure(.noSocket) }
        var timeout = timeval(tv_sec: Int(timeoutMilliseconds / 1000), tv_usec: .init(timeoutMilliseconds % 1000) * 1000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connectSocket(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let reason = Platform.describe(errno: errno)
            close(descriptor)
            return .failure(.refused(reason))
        }
        return .success(descriptor)
    }

    /// Reads until at least `count` bytes came, the peer closed, or a receive failed or timed out.
    public static func read(_ descriptor: Int32, atLeast count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while bytes.count < count {
            let received = readSocket(descriptor, &buffer, buffer.count)
            if received < 0 && errno == EINTR { continue }
            if received <= 0 { break }
            bytes += buffer[..<received]
        }
        return bytes
    }
}

// The C calls under names of their own: inside `Socket`, `connect` and `read` name its methods.
private func connectSocket(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(descriptor, address, length)
}

private func readSocket(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
