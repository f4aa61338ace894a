import MishapSupport

/// A port that breaks TLS handshakes below TLS: it accepts TCP connections and then either
/// resets each once its ClientHello has arrived, or holds each open without ever answering.
/// The TLS failure catalogue's `handshake-reset` and `handshake-stall` (libmicrohttpd would
/// answer the ClientHello, so these are plain sockets). One thread polls every socket; at most
/// `maximumHeld` connections are held, the oldest closed first, so memory stays bounded.
public final class HandshakeFaultListener: @unchecked Sendable {
    /// What happens to each connection.
    public enum Behaviour: Sendable {
        /// Read the ClientHello, then close with a TCP reset.
        case resetAfterHello
        /// Read and drop what arrives, never answer, close only when the client does (or at stop).
        case stall
    }

    public let behaviour: Behaviour
    /// The port listened on.
    public let port: UInt16
    /// Connections held at most.
    public static let maximumHeld = 64
    /// How long a connection that sends nothing waits before it is reset anyway.
    static let helloWaitMilliseconds = 10_000

    private let listening: Int32
    private let wake: (read: Int32, write: Int32)
    private var thread: OwnThread?

    /// Listens on `host:port` (0 picks a free port) and starts serving the behaviour.
    public init(host: String, port: UInt16, behaviour: Behaviour) throws {
        guard var address = SocketAddress(host: host, port: port) else { throw ServerError.unresolvableHost(host) }
        let family = Int32(address.storage.ss_family)
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw ServerError.startFailed(host: host, port: port, reason: Platform.describe(errno: errno))
        }
        var on: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        let length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, 128) == 0, let pipe = FileDescriptor.makePipe(nonBlocking: true) else {
            let reason = Platform.describe(errno: errno)
            close(descriptor)
            throw ServerError.startFailed(host: host, port: port, reason: reason)
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
        self.behaviour = behaviour
        self.port = UInt16(bigEndian: portNetworkOrder)
        listening = descriptor
        wake = pipe
        thread = OwnThread { [self] in serve() }
        if thread == nil {
            close(pipe.read)
            close(pipe.write)
            close(descriptor)
            throw ServerError.startFailed(host: host, port: port, reason: "no thread")
        }
    }

    /// A connection held: its socket and when it was accepted (milliseconds, monotonic).
    private struct Held {
        var socket: Int32
        var since: Int64
    }

    /// The listener's thread: one poll over the wake pipe, the listening socket and every
    /// connection held, until `stop` writes to the pipe.
    private func serve() {
        var held: [Held] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        defer {
            for connection in held { close(connection.socket) }
        }
        while true {
            var descriptors = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: listening, events: Int16(POLLIN), revents: 0)]
            descriptors += held.map { pollfd(fd: $0.socket, events: Int16(POLLIN), revents: 0) }
            let timeout: Int32 = behaviour == .resetAfterHello && !held.isEmpty ? 500 : -1
            guard poll(&descriptors, nfds_t(descriptors.count), timeout) >= 0 || errno == EINTR else { return }
            if descriptors[0].revents != 0 { return }
            let now = MonotonicClock.milliseconds()
            var keep: [Held] = []
            for (index, connection) in held.enumerated() {
                let events = descriptors[index + 2].revents
                switch behaviour {
                case .resetAfterHello:
                    if events != 0 || now - connection.since > Int64(Self.helloWaitMilliseconds) {
                        _ = read(connection.socket, &buffer, buffer.count)
                        Socket.resetOnClose(connection.socket)
                        close(connection.socket)
                    } else {
                        keep.append(connection)
                    }
                case .stall:
                    if events != 0 && read(connection.socket, &buffer, buffer.count) <= 0 {
                        close(connection.socket)  // the client gave up
                    } else {
                        keep.append(connection)
                    }
                }
            }
            held = keep
            if descriptors[1].revents != 0 {
                let accepted = accept(listening, nil, nil)
                if accepted >= 0 {
                    _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK)
                    if held.count >= Self.maximumHeld {
                        close(held.removeFirst().socket)
                    }
                    held.append(Held(socket: accepted, since: now))
                }
            }
        }
    }

    /// Stops listening and closes every connection held. Idempotent.
    public func stop() {
        guard let thread else { return }
        self.thread = nil
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        thread.join()
        close(listening)
        close(wake.read)
        close(wake.write)
    }

    deinit {
        stop()
    }
}
