#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The listening side, for listeners of Mishap's own outside libmicrohttpd (the TLS failure
// catalogue's plain sockets), and what the server asks of a connection's socket.
extension Socket {
    /// Listens on `address` (port 0 picks a free one): a socket that closes on exec, reuses the
    /// address, with a backlog of `backlog`. The socket and the port listened on, or the
    /// system's reason.
    public static func listen(on address: inout SocketAddress, backlog: Int32 = 128) -> Result<(socket: Int32, port: UInt16), ListenFailure> {
        let family = address.family
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .failure(ListenFailure(reason: Platform.describe(errno: errno))) }
        var on: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        let length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let bound = address.withSockaddr { bind(descriptor, $0, length) }
        guard bound == 0, listenSocket(descriptor, backlog) == 0 else {
            let reason = Platform.describe(errno: errno)
            close(descriptor)
            return .failure(ListenFailure(reason: reason))
        }
        var local = sockaddr_storage()
        var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &localLength) }
        }
        let portNetworkOrder = withUnsafePointer(to: &local) { pointer -> UInt16 in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }
        }
        return .success((descriptor, UInt16(bigEndian: portNetworkOrder)))
    }

    /// Why `listen(on:)` could not listen: the system's reason.
    public struct ListenFailure: Error {
        public let reason: String
    }

    /// A connection taken from a listening socket, made close-on-exec and non-blocking; nil
    /// when none was waiting (or on an error).
    public static func acceptNonBlocking(_ listening: Int32) -> Int32? {
        let accepted = accept(listening, nil, nil)
        guard accepted >= 0 else { return nil }
        _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
        _ = fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK)
        return accepted
    }

    /// Waits until one of `descriptors` can be read (or has closed) or `timeoutMilliseconds`
    /// pass (-1: no limit): for each, whether it has something to say; all false when a signal
    /// cut the wait short; nil on an error.
    public static func waitForReading(_ descriptors: [Int32], timeoutMilliseconds: Int32) -> [Bool]? {
        var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        if poll(&polled, nfds_t(polled.count), timeoutMilliseconds) < 0 {
            return errno == EINTR ? [Bool](repeating: false, count: descriptors.count) : nil
        }
        return polled.map { $0.revents != 0 }
    }

    /// Reads what has arrived on `socket` into `buffer` and drops it: the count read, 0 when
    /// the peer has closed, -1 on an error (or nothing there, for a non-blocking socket).
    @discardableResult
    public static func drain(_ socket: Int32, into buffer: inout [UInt8]) -> Int {
        buffer.withUnsafeMutableBytes { readSocket($0.baseAddress!, socket, $0.count) }
    }

    /// Whether the peer has closed (or reset) its side of `socket`, without consuming data.
    public static func peerClosed(_ socket: Int32) -> Bool {
        var byte: UInt8 = 0
        let count = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if count == 0 { return true }
        return count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR
    }
}

extension FileDescriptor {
    /// Closes `descriptor`.
    public static func close(_ descriptor: Int32) {
        _ = closeDescriptor(descriptor)
    }

    /// Writes one byte (to wake a thread polling a pipe's other end); whether it was written.
    @discardableResult
    public static func writeByte(_ descriptor: Int32, _ byte: UInt8 = 1) -> Bool {
        var byte = byte
        return write(descriptor, &byte, 1) == 1
    }
}

// The C calls under names of their own: inside `Socket` and `FileDescriptor`, `listen`, `read`
// and `close` name their methods.
private func listenSocket(_ descriptor: Int32, _ backlog: Int32) -> Int32 {
    listen(descriptor, backlog)
}

private func readSocket(_ buffer: UnsafeMutableRawPointer, _ descriptor: Int32, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func closeDescriptor(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
