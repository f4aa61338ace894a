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
        let listened: (socket: Int32, port: UInt16)
        switch Socket.listen(on: &address) {
        case .success(let result): listened = result
        case .failure(let failure): throw ServerError.startFailed(host: host, port: port, reason: failure.reason)
        }
        guard let pipe = FileDescriptor.makePipe(nonBlocking: true) else {
            let reason = Platform.describeLastError()
            FileDescriptor.close(listened.socket)
            throw ServerError.startFailed(host: host, port: port, reason: reason)
        }
        let descriptor = listened.socket
        self.behaviour = behaviour
        self.port = listened.port
        listening = descriptor
        wake = pipe
        thread = OwnThread { [self] in serve() }
        if thread == nil {
            FileDescriptor.close(pipe.read)
            FileDescriptor.close(pipe.write)
            FileDescriptor.close(descriptor)
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
            for connection in held { FileDescriptor.close(connection.socket) }
        }
        while true {
            let timeout: Int32 = behaviour == .resetAfterHello && !held.isEmpty ? 500 : -1
            guard let ready = Socket.waitForReading([wake.read, listening] + held.map(\.socket), timeoutMilliseconds: timeout)
            else { return }
            if ready[0] { return }
            let now = MonotonicClock.milliseconds()
            var keep: [Held] = []
            for (index, connection) in held.enumerated() {
                let readable = ready[index + 2]
                switch behaviour {
                case .resetAfterHello:
                    if readable || now - connection.since > Int64(Self.helloWaitMilliseconds) {
                        Socket.drain(connection.socket, into: &buffer)
                        Socket.resetOnClose(connection.socket)
                        FileDescriptor.close(connection.socket)
                    } else {
                        keep.append(connection)
                    }
                case .stall:
                    if readable && Socket.drain(connection.socket, into: &buffer) <= 0 {
                        FileDescriptor.close(connection.socket)  // the client gave up
                    } else {
                        keep.append(connection)
                    }
                }
            }
            held = keep
            if ready[1], let accepted = Socket.acceptNonBlocking(listening) {
                if held.count >= Self.maximumHeld {
                    FileDescriptor.close(held.removeFirst().socket)
                }
                held.append(Held(socket: accepted, since: now))
            }
        }
    }

    /// Stops listening and closes every connection held. Idempotent.
    public func stop() {
        guard let thread else { return }
        self.thread = nil
        FileDescriptor.writeByte(wake.write)
        thread.join()
        FileDescriptor.close(listening)
        FileDescriptor.close(wake.read)
        FileDescriptor.close(wake.write)
    }

    deinit {
        stop()
    }
}
