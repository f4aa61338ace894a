import Logging
import MishapEngine
import MishapHTTP
import MishapScenarios
import MishapSupport
import MishapTLS
import Synchronization

/// A running Mishap, put together in one place: the scenarios loaded into a `MishapService`,
/// the `HTTPServer` that asks it what to answer, and for a folder the `ScenarioWatcher` that
/// reloads it on edits. `mishap serve`, MishapTesting and the test harnesses all start Mishap
/// through this type, so a part that fails to start is reported the same way everywhere.
///
/// ```swift
/// let mishap = try MishapInstance.start(MishapInstance.Configuration(scenarios: .directory("scenarios")))
/// print(mishap.url)                 // http://127.0.0.1:8080
/// try mishap.reload()
/// mishap.stop(grace: .seconds(10))
/// ```
public final class MishapInstance: Sendable {
    /// Everything a running Mishap is made of, layer by layer.
    public struct Configuration: Sendable {
        /// Where the scenarios come from (a folder is read again on every reload).
        public var scenarios: ScenarioSource
        /// The journal, the admin API, the request log and the engine's options.
        public var service: ServiceOptions
        /// The address, threads and limits of the HTTP server.
        public var server: ServerConfiguration
        /// How edits to a scenarios folder are picked up (ignored for inline text).
        public var watch: WatchMode
        /// HTTPS beside plain HTTP, and the TLS failure catalogue; nil for plain HTTP only (or
        /// for `tlsSetup`'s).
        public var tls: TLSOptions?
        /// HTTPS as `serve` is asked for it, made into `tls` as the instance starts (the local
        /// certificate authority opened or made, certificates issued); read only when `tls` is nil.
        public var tlsSetup: TLSSetup?
        /// How long a file written in place must stay unchanged before the watcher reads it.
        public var watchSettle: Duration
        /// A second port serving only the admin API and the dashboard (`/__mishap/`), never taken
        /// down: 0 picks a free one; nil for none. With it, the serving port can go down
        /// (`POST /__mishap/down`, docs/refused-connections.md).
        public var adminPort: UInt16?

        public init(scenarios: ScenarioSource, service: ServiceOptions = ServiceOptions(),
                    server: ServerConfiguration = ServerConfiguration(), watch: WatchMode = .off,
                    tls: TLSOptions? = nil, tlsSetup: TLSSetup? = nil,
                    watchSettle: Duration = ScenarioWatcher.defaultWriteSettle, adminPort: UInt16? = nil) {
            self.scenarios = scenarios
            self.service = service
            self.server = server
            self.watch = watch
            self.tls = tls
            self.tlsSetup = tlsSetup
            self.watchSettle = watchSettle
            self.adminPort = adminPort
        }
    }

    /// How edits to a scenarios folder are picked up.
    public enum WatchMode: String, Sendable, CaseIterable {
        /// inotify, else polling.
        case auto
        /// Polling only (twice a second), which works on every file system.
        case poll
        /// Not at all: only `reload()` (SIGHUP, `POST /__mishap/reload`) reads the folder again.
        case off
    }

    /// Which part of Mishap did not start, and why.
    public enum StartError: Error, CustomStringConvertible {
        /// The scenarios have problems (located, `path:line:column`).
        case scenarios(ScenarioError)
        /// The server could not listen (a port in use, an unknown host).
        case server(any Error)
        /// HTTPS could not be set up (`tlsSetup`): a certificate or key unreadable, the local
        /// certificate authority not made.
        case tls(TLSError)

        public var description: String {
            switch self {
            case .scenarios(let error): error.description
            case .server(let error): "\(error)"
            case .tls(let error): "HTTPS: \(error)"
            }
        }
    }

    public let configuration: Configuration
    /// The scenarios in force, the journal, the Retry-After check and the admin API.
    public let service: MishapService
    /// The server listening for clients.
    public let server: HTTPServer
    /// The folder watcher, when one is running.
    public let watcher: ScenarioWatcher?
    /// The URL clients use, `http://127.0.0.1:8080`.
    public let url: String
    /// The port listened on (the one picked when the configuration asked for 0).
    public let port: UInt16
    /// The HTTPS server and the TLS failure catalogue, when the configuration asks for them.
    let secure: SecureServers?
    /// Where HTTPS and the catalogue are served; nil without `tls`.
    public var tls: TLSListing? { secure?.listing }
    /// The server of the admin port (`Configuration.adminPort`), when there is one.
    public let adminServer: HTTPServer?
    /// The admin port's URL, `http://127.0.0.1:9090`; nil without one.
    public var adminURL: String? { adminServer?.url }

    /// Loads the scenarios (unless `scenarios` gives them already loaded from the same source),
    /// starts the server and, when asked, the watcher. Scenario problems and a server that
    /// cannot listen are thrown; a watcher that cannot start is logged as a warning, and Mishap
    /// serves on with edits picked up on reload only.
    public static func start(_ configuration: Configuration, scenarios: ScenarioSet? = nil,
                             logger: Logger = Logger(label: "mishap")) throws(StartError) -> MishapInstance {
        var configuration = configuration
        if configuration.tls == nil, let setup = configuration.tlsSetup {
            do throws(TLSError) {
                configuration.tls = try setup.make(host: configuration.server.host, logger: logger)
            } catch {
                throw .tls(error)
            }
        }
        // The API description (`--openapi`) is read before anything starts: its problems are the scenarios'.
        if let path = configuration.service.openAPI, configuration.service.requestContract == nil {
            do throws(ScenarioError) {
                configuration.service.requestContract = try OpenAPILoader.load(path: path)
            } catch {
                throw .scenarios(error)
            }
        }
        let service: MishapService
        if let scenarios {
            service = MishapService(source: configuration.scenarios, scenarios: scenarios,
                                    options: configuration.service, logger: logger)
        } else {
            do throws(ScenarioError) {
                service = try MishapService(source: configuration.scenarios, options: configuration.service, logger: logger)
            } catch {
                throw .scenarios(error)
            }
        }
        // A folder's load is logged (inline text is the caller's own, and small).
        if case .directory = configuration.scenarios {
            logger.info("\(service.scenarios.loadSummary())")
        }
        service.logWarnings()
        // Requests are followed to their end when their lines are logged, or when the journal
        // keeps them (it notes how long each took).
        let logsRequests = configuration.service.logRequests && logger.logLevel <= .info
        let followsRequests = logsRequests || service.journal.capacity > 0
        var serverConfiguration = configuration.server
        // With an admin port, the serving port can go down and come back.
        if configuration.adminPort != nil { serverConfiguration.canGoDown = true }
        if let tls = configuration.tls, tls.replacesPlainHTTP {
            serverConfiguration.port = tls.port
            serverConfiguration.tls = tls.settings
        }
        let server = HTTPServer(configuration: serverConfiguration, responder: service,
                                observer: followsRequests ? service : nil, logger: logger)
        do {
            try server.start()
        } catch {
            throw .server(error)
        }
        var secure: SecureServers?
        if let tls = configuration.tls {
            do {
                secure = try SecureServers.start(tls, server: configuration.server, main: server, responder: service,
                                                 observer: followsRequests ? service : nil, logger: logger)
            } catch {
                server.stop()
                throw .server(error)
            }
            service.tls.withLock { $0 = secure?.listing }
        }
        let adminServer: HTTPServer?
        do {
            adminServer = try startAdminServer(configuration, service: service, logger: logger)
        } catch {
            _ = secure?.stop(grace: .zero)
            server.stop()
            throw .server(error)
        }
        ServingPorts.register(service, server: server, adminServer: adminServer)
        let httpsPort = secure.flatMap { ProxyTarget.authority(of: $0.listing.url)?.port }
        service.listening(host: serverConfiguration.host, ports: [server.port ?? 0] + (httpsPort.map { [$0] } ?? []))
        return MishapInstance(configuration: configuration, service: service, server: server, secure: secure,
                              adminServer: adminServer, watcher: startWatcher(configuration, service: service, logger: logger))
    }

    /// The admin port's server, started, when the configuration asks for one: loopback, unless an
    /// admin token lets other machines call the admin API (then on the serving host), as the
    /// admin API's own rules go. It answers `/__mishap/` only, and is never taken down.
    private static func startAdminServer(_ configuration: Configuration, service: MishapService,
                                         logger: Logger) throws -> HTTPServer? {
        guard let adminPort = configuration.adminPort else { return nil }
        let host = configuration.service.adminToken != nil ? configuration.server.host : "127.0.0.1"
        let adminConfiguration = ServerConfiguration(
            host: host, port: adminPort, threads: 1, maxBodyBytes: configuration.server.maxBodyBytes,
            maxHeaderBytes: configuration.server.maxHeaderBytes, connectionLimit: 256,
            connectionTimeoutSeconds: configuration.server.connectionTimeoutSeconds,
            eventLoop: configuration.server.eventLoop, headTimeoutSeconds: configuration.server.headTimeoutSeconds)
        let server = HTTPServer(configuration: adminConfiguration, responder: AdminPortResponder(service: service),
                                logger: logger)
        try server.start()
        return server
    }

    private init(configuration: Configuration, service: MishapService, server: HTTPServer, secure: SecureServers?,
                 adminServer: HTTPServer?, watcher: ScenarioWatcher?) {
        self.configuration = configuration
        self.service = service
        self.server = server
        self.secure = secure
        self.adminServer = adminServer
        self.watcher = watcher
        url = server.url ?? "http://\(configuration.server.host):\(configuration.server.port)"
        port = server.port ?? configuration.server.port
    }

    /// The watcher a configuration asks for, started; nil when none is asked or it cannot start.
    private static func startWatcher(_ configuration: Configuration, service: MishapService,
                                     logger: Logger) -> ScenarioWatcher? {
        guard configuration.watch != .off, case .directory(let directory) = configuration.scenarios else { return nil }
        let watcher = ScenarioWatcher(directory: directory, writeSettle: configuration.watchSettle, logger: logger) { [service] in
            _ = try? service.reload()
        }
        do {
            try watcher.start(forcePolling: configuration.watch == .poll)
            return watcher
        } catch {
            logger.warning("\(error); edits are picked up on reload only (SIGHUP or POST /__mishap/reload)")
            return nil
        }
    }

    /// Whether a server listening on `host` accepts connections from this machine only (the
    /// certificate of HTTPS then needs no other name; `serve` warns otherwise).
    public static func isLoopback(host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// Reads the scenarios again, as `MishapService.reload()`: problems are logged and thrown,
    /// and the scenarios in force keep answering.
    @discardableResult
    public func reload() throws(ScenarioError) -> ReloadSummary {
        try service.reload()
    }

    /// Requests being answered now (delayed ones included).
    public var requestsInFlight: Int { server.requestsInFlight }

    /// Stops watching, stops accepting connections, lets requests in flight finish for up to
    /// `grace` (hanging ones go at once), then closes what remains. Returns how many requests
    /// were cut short. Idempotent.
    @discardableResult
    public func stop(grace: Duration = .zero) -> Int {
        watcher?.stop()
        // The HTTPS servers stop beside the plain one, so that both have the whole grace.
        let secureCut = Mutex(0)
        var secureStop: OwnThread?
        if let secure {
            secureStop = OwnThread { secureCut.withLock { $0 = secure.stop(grace: grace) } }
            if secureStop == nil { secureCut.withLock { $0 = secure.stop(grace: grace) } }
        }
        var cut = server.stop(grace: grace)
        // The admin port last: it answered while the serving port stopped.
        adminServer?.stop()
        ServingPorts.unregister(service)
        secureStop?.join()
        cut += secureCut.withLock { $0 }
        // No connection waits for an upstream's answer any more: calls still out are cancelled.
        service.stopUpstream()
        // Every request line is written when stop returns.
        service.flushLog()
        return cut
    }
}
