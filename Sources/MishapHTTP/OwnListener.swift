#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMicroHTTPD
import CMicroHTTPDShim
import Dispatch
import Logging
import MishapSupport
import Synchronization

/// The listening socket of a server that can go down (`ServerConfiguration.canGoDown`): Mishap's
/// own, not libmicrohttpd's. One thread polls it and hands each accepted connection to the
/// daemon (started with `MHD_USE_NO_LISTEN_SOCKET`) with `MHD_add_connection`, which only queues
/// it for a worker thread and wakes that thread's loop: no worker ever blocks on it.
///
/// Going down closes the socket, so new connections are refused (`ECONNREFUSED`); requests in
/// flight finish, and connections idle between requests (keep-alive) are shut down, so a
/// client's pool reconnects and meets the refusal. Coming back binds the same port again
/// (`SO_REUSEADDR`). libmicrohttpd 0.9.75's `MHD_quiesce_daemon` cannot do this: it cannot be
/// undone, and it can abort with a thread pool (docs/libmicrohttpd.md, "A listening socket of
/// Mishap's own").
final class OwnListener: @unchecked Sendable {
    /// The address bound, with the port listened on.
    private var address: SocketAddress
    /// The port listened on (the one chosen when configured with 0), kept while down.
    let port: UInt16
    let logger: Logger
    /// Connections of this backlog wait to be accepted.
    static let backlog: Int32 = 1024

    /// Whether the listening socket is closed: read on every request's end, so atomic.
    private let down = Atomic<Bool>(false)
    /// What the control calls (go down, come back, stop) change, one at a time.
    private let control = Mutex<Control>(Control())
    private struct Control: @unchecked Sendable {
        /// The socket, its wake pipe and its thread while listening.
        var accepting: Accepting?
        /// When a going down ends by itself; nil while up.
        var downUntil: ContinuousClock.Instant?
        /// Counts going-downs, so a timer left from an earlier one does nothing.
        var generation = 0
        /// The daemon connections are handed to; nil once stopped.
        var daemon: OpaquePointer?
    }

    /// Every open connection of the daemon, keyed by its libmicrohttpd pointer, with the head
    /// deadline's record of it (its phase says whether a request is in flight). A connection is
    /// removed by libmicrohttpd's CLOSED notification, which 0.9.75 sends before it closes the
    /// socket; its socket is shut down only under this lock, so the descriptor is still its own.
    private let connections = Mutex<[UInt: WatchedConnection]>([:])

    /// Binds `host:port` and listens, not yet accepting (see `startAccepting`).
    init(address: SocketAddress, host: String, logger: Logger) throws {
        var address = address
        let listened: (socket: Int32, port: UInt16)
        switch Socket.listen(on: &address, backlog: Self.backlog) {
        case .success(let result): listened = result
        case .failure(let failure):
            throw ServerError.startFailed(host: host, port: Self.port(of: address), reason: failure.reason)
        }
        Self.setPort(listened.port, of: &address)
        self.address = address
        port = listened.port
        self.logger = logger
        control.withLock { $0.accepting = Accepting(listening: listened.socket) }
    }

    /// Starts handing connections to `daemon`.
    func startAccepting(daemon: OpaquePointer) throws {
        try control.withLock { control in
            control.daemon = daemon
            guard let accepting = control.accepting else { return }
            try accepting.start(daemon: daemon, logger: logger)
        }
    }

    /// Whether the listening socket is closed.
    var isDown: Bool { down.load(ordering: .relaxed) }

    /// When the listening socket comes back by itself, while down.
    var downUntil: ContinuousClock.Instant? { control.withLock { $0.downUntil } }

    /// Closes the listening socket for `duration`, or until `comeBack`; a second call while down
    /// replaces the end (now plus its own duration). `comeBackLater` is called to bring it back
    /// when the time is up, with the generation to pass to `comeBack(ifGeneration:)`.
    func goDown(for duration: Duration, comeBackLater: @escaping @Sendable (Int) -> Void) -> Bool {
        let generation = control.withLock { control -> Int? in
            guard control.daemon != nil else { return nil }
            control.accepting?.stop()
            control.accepting = nil
            control.downUntil = .now + duration
            control.generation += 1
            down.store(true, ordering: .relaxed)
            return control.generation
        }
        guard let generation else { return false }
        shutDownIdleConnections()
        let milliseconds = Int(duration / .milliseconds(1))
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(max(0, milliseconds))) {
            comeBackLater(generation)
        }
        return true
    }

    /// Listens again on the same port, when down (and, given a generation, only if no later
    /// going down replaced that one). Throws when the port cannot be bound again (another
    /// process took it): the server stays down.
    func comeBack(ifGeneration generation: Int? = nil) throws {
        try control.withLock { control in
            guard let daemon = control.daemon, control.accepting == nil else { return }
            if let generation, generation != control.generation { return }
            let listening: Int32
            switch Socket.listen(on: &address, backlog: Self.backlog) {
            case .success(let result): listening = result.socket
            case .failure(let failure):
                throw ServerError.startFailed(host: "the same address", port: port, reason: failure.reason)
            }
            let accepting = Accepting(listening: listening)
            do {
                try accepting.start(daemon: daemon, logger: logger)
            } catch {
                FileDescriptor.close(listening)
                throw error
            }
            control.accepting = accepting
            control.downUntil = nil
            down.store(false, ordering: .relaxed)
        }
    }

    /// Stops accepting for good (before the daemon stops: no connection may be handed to it
    /// afterwards). Idempotent.
    func stop() {
        control.withLock { control in
            control.accepting?.stop()
            control.accepting = nil
            control.daemon = nil
            control.downUntil = nil
            control.generation += 1
            down.store(false, ordering: .relaxed)
        }
    }

    // MARK: Connections

    /// A connection opened (STARTED notification, on its worker thread), with its record. While
    /// down, one accepted just before the socket closed is shut down at once.
    func opened(_ connection: OpaquePointer, _ watched: WatchedConnection) {
        connections.withLock { table in
            table[Self.key(connection)] = watched
            if down.load(ordering: .relaxed) { Socket.shutDown(watched.socket) }
        }
    }

    /// A connection is about to close (CLOSED notification, before libmicrohttpd closes its
    /// socket): from here on its socket is never touched.
    func closed(_ connection: OpaquePointer) {
        _ = connections.withLock { $0.removeValue(forKey: Self.key(connection)) }
    }

    /// Shuts down every connection with no request in flight: libmicrohttpd reads the end of the
    /// stream and closes it. Called when going down and, while down, as each request ends.
    func shutDownIdleConnections() {
        connections.withLock { table in
            for watched in table.values where watched.phase.load(ordering: .relaxed) & 1 == 0 {
                Socket.shutDown(watched.socket)
            }
        }
    }

    private static func key(_ connection: OpaquePointer) -> UInt {
        UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
    }

    // MARK: The port in an address

    private static func port(of address: SocketAddress) -> UInt16 {
        var copy = address
        return copy.withSockaddr { pointer in
            address.isIPv6
                ? pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
                : pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }

    private static func setPort(_ port: UInt16, of address: inout SocketAddress) {
        withUnsafeMutablePointer(to: &address.storage) { pointer in
            if address.isIPv6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port = port.bigEndian }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port = port.bigEndian }
            }
        }
    }
}

/// A listening socket and the thread accepting on it, until stopped.
private final class Accepting: @unchecked Sendable {
    let listening: Int32
    private var wake: (read: Int32, write: Int32)?
    private var thread: OwnThread?

    init(listening: Int32) {
        self.listening = listening
        _ = fcntl(listening, F_SETFL, fcntl(listening, F_GETFL) | O_NONBLOCK)
    }

    /// Starts the thread: it polls the socket and hands what it accepts to `daemon`. On failure
    /// the socket is left open, for its owner to close.
    func start(daemon: OpaquePointer, logger: Logger) throws {
        guard let pipe = FileDescriptor.makePipe(nonBlocking: true) else {
            throw ServerError.startFailed(host: "", port: 0, reason: Platform.describeLastError())
        }
        let listening = listening
        thread = OwnThread {
            while true {
                guard let ready = Socket.waitForReading([pipe.read, listening], timeoutMilliseconds: -1) else {
                    usleep(10_000)
                    continue
                }
                if ready[0] { return }
                // Out of descriptors: the socket stays readable, so wait instead of spinning.
                if ready[1], mishap_accept_connections(daemon, listening) < 0 {
                    logger.warning("cannot accept connections: \(Platform.describeLastError())")
                    usleep(50_000)
                }
            }
        }
        guard thread != nil else {
            FileDescriptor.close(pipe.read)
            FileDescriptor.close(pipe.write)
            throw ServerError.startFailed(host: "", port: 0, reason: "no thread to accept connections")
        }
        wake = pipe
    }

    /// Stops the thread and closes the socket: new connections are refused from now on (those
    /// waiting in the backlog, never accepted, are reset).
    func stop() {
        if let wake, let thread {
            FileDescriptor.writeByte(wake.write)
            thread.join()
            FileDescriptor.close(wake.read)
            FileDescriptor.close(wake.write)
        }
        wake = nil
        thread = nil
        FileDescriptor.close(listening)
    }
}

/// libmicrohttpd's connection notification for a server that can go down: the head deadline's
/// (which keeps the connection's record as its socket context) and then this listener's table.
func handleDownableConnectionNotice(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ code: MHD_ConnectionNotificationCode
) {
    guard let cls, let connection, let socketContext else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    guard let listener = server.ownListener else { return }
    if code == .CONNECTION_NOTIFY_CLOSED { listener.closed(connection) }
    handleConnectionNotice(cls, connection, socketContext, code)
    if code == .CONNECTION_NOTIFY_STARTED, let context = socketContext.pointee {
        listener.opened(connection, Unmanaged<WatchedConnection>.fromOpaque(context).takeUnretainedValue())
    }
}
