import CMicroHTTPD
import CMicroHTTPDShim
import Logging
import MishapEngine
import Synchronization
import MishapSupport

/// An HTTP/1.1 server on libmicrohttpd that asks a `Responder` what to answer and sends it.
///
/// libmicrohttpd runs its own worker threads (one epoll loop each); the responder is called on
/// them concurrently.
public final class HTTPServer: @unchecked Sendable {
    public let configuration: ServerConfiguration
    let responder: any Responder
    /// Told about each request as it ends.
    let observer: (any RequestObserver)?
    /// Whether the observer follows every request (a request log), read several times per
    /// request: testing the optional existential itself copies it (a retain and a release each
    /// time). Without it, requests keep no record, and only tagged plans are reported.
    let isObserved: Bool
    let logger: Logger
    /// Requests begun and not yet ended (idle keep-alive connections are not counted).
    private let inFlight = Atomic<Int>(0)
    /// Connections waiting on a delay, a hang or a dribble.
    let suspensions = Suspensions()
    /// Upgraded (WebSocket) connections, played on a thread of their own.
    let webSockets: WebSocketLoop

    // Guarded by `lifecycle`: the daemon handle, the retained self passed as callback context,
    // and the logger context that must outlive the daemon.
    private let lifecycle = Mutex<Running?>(nil)
    private struct Running: @unchecked Sendable {
        let daemon: OpaquePointer
        let port: UInt16
        let context: Unmanaged<HTTPServer>
        let logContext: UnsafeMutablePointer<mishap_logger>
        /// The PEM texts libmicrohttpd was given, kept for the daemon's life.
        let tls: TLSStrings?
    }

    /// The last message libmicrohttpd logged, used to explain a failed start.
    let lastLogMessage = Mutex<String?>(nil)
    /// Closes connections slow to send a request head; nil when `headTimeoutSeconds` is 0 (unless
    /// the server can go down: its table of connections tells which are idle).
    let headDeadline: HeadDeadline?
    /// Mishap's own listening socket, for a server that can go down (`canGoDown`); set by `start`.
    private(set) var ownListener: OwnListener?

    public init(configuration: ServerConfiguration, responder: any Responder, observer: (any RequestObserver)? = nil,
                logger: Logger = Logger(label: "mishap.server")) {
        self.configuration = configuration
        self.responder = responder
        self.observer = observer
        isObserved = observer?.followsEveryRequest ?? false
        self.logger = logger
        webSockets = WebSocketLoop(logger: logger)
        if configuration.headTimeoutSeconds > 0 {
            headDeadline = HeadDeadline(headTimeoutSeconds: configuration.headTimeoutSeconds,
                                        connectionLimit: configuration.connectionLimit, logger: logger)
        } else if configuration.canGoDown {
            // Only its table: a deadline of a year, and no reserve kept (a limit of 0).
            headDeadline = HeadDeadline(headTimeoutSeconds: 366 * 86_400, connectionLimit: 0, logger: logger)
        } else {
            headDeadline = nil
        }
    }

    /// Requests being answered right now (delayed and dribbled ones included).
    public var requestsInFlight: Int { inFlight.load(ordering: .relaxed) }

    func requestStarted() { inFlight.add(1, ordering: .relaxed) }
    func requestEnded() {
        inFlight.subtract(1, ordering: .relaxed)
        // While down, the connection just done with its request (and any other idle) is closed.
        if let ownListener, ownListener.isDown { ownListener.shutDownIdleConnections() }
    }

    /// The port the server listens on while running (the real one when started with port 0).
    public var port: UInt16? { lifecycle.withLock { $0?.port } }

    /// The base URL clients use, e.g. `http://127.0.0.1:8080`.
    public var url: String? {
        guard let port else { return nil }
        return Self.url(scheme: configuration.tls == nil ? "http" : "https", host: configuration.host, port: port)
    }

    /// The URL of `host:port`, an IPv6 address in brackets.
    public static func url(scheme: String, host: String, port: UInt16) -> String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// Whether this libmicrohttpd can wait with epoll (built for Linux).
    // MHD_FEATURE_EPOLL is 7; Swift does not name the cases of this enum.
    static let hasEpoll = MHD_FEATURE(rawValue: 7).map { MHD_is_feature_supported($0) == .YES } ?? false

    /// The event loop `configuration.eventLoop` comes to on this system.
    public var eventLoop: ServerConfiguration.EventLoop {
        switch configuration.eventLoop {
        case .auto: Self.hasEpoll ? .epoll : .poll
        case let chosen: chosen
        }
    }

    /// Binds and starts serving; returns once the socket accepts connections.
    public func start() throws {
        guard var address = SocketAddress(host: configuration.host, port: configuration.port) else {
            throw ServerError.unresolvableHost(configuration.host)
        }
        webSockets.reopen()
        let context = Unmanaged.passRetained(self)
        let logContext = UnsafeMutablePointer<mishap_logger>.allocate(capacity: 1)
        logContext.initialize(to: mishap_logger(log: logFromDaemon, cls: context.toOpaque()))

        // MHD_USE_TURBO closes without a prior shutdown, which lets the `reset` fault send a RST
        // (each flag and option: docs/libmicrohttpd.md, "Daemon flags and options").
        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_ERROR_LOG.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_TURBO.rawValue | MHD_USE_ITC.rawValue
            | MHD_ALLOW_UPGRADE.rawValue
        switch configuration.eventLoop {
        case .epoll: flags |= MHD_USE_EPOLL.rawValue
        case .poll: flags |= MHD_USE_POLL.rawValue
        case .auto: flags |= Self.hasEpoll ? MHD_USE_EPOLL.rawValue : MHD_USE_POLL.rawValue
        }
        if address.isIPv6 { flags |= address.isIPv6Any ? MHD_USE_DUAL_STACK.rawValue : MHD_USE_IPv6.rawValue }
        // HTTPS: libmicrohttpd reads the PEM texts while it starts, from C strings that live
        // as long as the daemon does.
        let tls = configuration.tls.map { TLSStrings($0) }
        if tls != nil { flags |= MHD_USE_TLS.rawValue }
        // A server that can go down listens itself and hands connections over
        // (docs/libmicrohttpd.md, "A listening socket of Mishap's own").
        let listener: OwnListener?
        if configuration.canGoDown {
            do {
                listener = try OwnListener(address: address, host: configuration.host, logger: logger)
            } catch {
                context.release()
                logContext.deallocate()
                throw error
            }
            flags |= MHD_USE_NO_LISTEN_SOCKET.rawValue
        } else {
            listener = nil
        }
        ownListener = listener

        let daemon = address.withSockaddr { sockaddrPointer in
            var config = mishap_daemon_config()
            config.flags = flags
            config.port = listener == nil ? configuration.port : 0
            config.address = listener == nil ? sockaddrPointer : nil
            config.thread_pool_size = UInt32(configuration.threads)
            config.connection_limit = UInt32(configuration.connectionLimit)
            config.connection_timeout_seconds = UInt32(configuration.connectionTimeoutSeconds)
            config.listen_backlog = 1024
            config.connection_memory_limit = configuration.connectionMemoryBytes
            config.handler = handleAccess
            config.handler_cls = context.toOpaque()
            config.completed = handleCompleted
            config.completed_cls = context.toOpaque()
            config.logger = logContext
            if listener != nil {
                config.notify_connection = handleDownableConnectionNotice
                config.notify_connection_cls = context.toOpaque()
            } else if headDeadline != nil {
                config.notify_connection = handleConnectionNotice
                config.notify_connection_cls = context.toOpaque()
            }
            if let tls {
                config.https_key_pem = UnsafePointer(tls.key)
                config.https_cert_pem = UnsafePointer(tls.certificate)
                config.https_priorities = tls.priorities.map { UnsafePointer($0) }
            }
            return mishap_start_daemon(&config)
        }
        guard let daemon else {
            listener?.stop()
            context.release()
            logContext.deallocate()
            let reason = lastLogMessage.withLock { $0 } ?? "libmicrohttpd could not start"
            throw ServerError.startFailed(host: configuration.host, port: configuration.port, reason: reason)
        }
        let port = listener?.port ?? (configuration.port == 0 ? mishap_daemon_port(daemon) : configuration.port)
        headDeadline?.start()
        do {
            try listener?.startAccepting(daemon: daemon)
        } catch {
            listener?.stop()
            MHD_stop_daemon(daemon)
            headDeadline?.stop()
            context.release()
            logContext.deallocate()
            throw error
        }
        lifecycle.withLock {
            $0 = Running(daemon: daemon, port: port, context: context, logContext: logContext, tls: tls)
        }
    }

    /// Stops: no new connections are accepted; requests in flight (delayed and dribbled ones
    /// too) may finish for up to `grace`; then every connection is closed. Hanging requests are
    /// let go at once (they never get an answer). Suspended connections are always resumed
    /// before the daemon stops (stopping with one suspended aborts the process). Safe to call
    /// more than once; returns the number of requests cut short by the end of the grace period.
    @discardableResult
    public func stop(grace: Duration = .zero) -> Int {
        guard let running = lifecycle.withLock({ state -> Running? in
            defer { state = nil }
            return state
        }) else { return 0 }
        // With a grace period, new connections are refused meanwhile: quiescing hands the
        // listening socket back, but the worker threads take it out of their epoll sets on
        // their own time, so closing it now would race them; shutting it down refuses new
        // connections at once, and it is closed once the daemon has stopped. Without one, the
        // daemon is not quiesced at all: libmicrohttpd 0.9.75's quiesce races a busy worker
        // taking the socket out of its epoll set, and aborts when the worker wins
        // (docs/libmicrohttpd.md, "Quiescing races the worker threads"); MHD_stop_daemon
        // closes the socket itself.
        // A listening socket of Mishap's own is closed at once, and no connection is handed
        // over afterwards.
        ownListener?.stop()
        let listening = grace > .zero && ownListener == nil ? MHD_quiesce_daemon(running.daemon) : -1
        if listening >= 0 { Socket.shutDown(listening) }
        suspensions.releaseHangs()
        // Upgraded sockets are closed (1001) now: each one's close action is called once, by
        // the loop, before the daemon stops (docs/libmicrohttpd.md, "Upgraded connections").
        webSockets.stop()
        let deadline = ContinuousClock.now + grace
        while inFlight.load(ordering: .relaxed) > 0 && ContinuousClock.now < deadline {
            usleep(5_000)
        }
        let cut = max(0, inFlight.load(ordering: .relaxed))
        suspensions.stop()
        MHD_stop_daemon(running.daemon)
        headDeadline?.stop()
        if listening >= 0 { close(listening) }
        running.logContext.deallocate()
        running.context.release()
        return cut
    }

    deinit {
        stop()
    }
}

/// libmicrohttpd's error log, one line at a time.
private func logFromDaemon(_ context: UnsafeMutableRawPointer?, _ message: UnsafePointer<CChar>?) {
    guard let context, let message else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    var line = String(cString: message)
    while line.last?.isNewline == true { line.removeLast() }
    server.lastLogMessage.withLock { $0 = line }
    server.logger.debug("\(line)", metadata: ["source": "libmicrohttpd"])
}
