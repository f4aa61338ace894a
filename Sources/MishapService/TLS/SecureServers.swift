import Logging
import MishapHTTP
import MishapSupport
import MishapTLS

/// The servers of `TLSOptions`, running: the HTTPS server (the same scenarios, journal and
/// admin API as plain HTTP, over TLS), a small HTTPS server per certificate or protocol failure
/// of the catalogue, and a plain listener per handshake failure.
final class SecureServers: Sendable {
    /// The HTTPS server beside plain HTTP; nil when the instance's own server speaks HTTPS
    /// (`TLSOptions.replacesPlainHTTP`).
    let https: HTTPServer?
    let catalogue: [HTTPServer]
    let listeners: [HandshakeFaultListener]
    let listing: TLSListing

    /// Connections each catalogue server takes at once: they exist to fail handshakes.
    static let catalogueConnectionLimit = 64

    private init(https: HTTPServer?, catalogue: [HTTPServer], listeners: [HandshakeFaultListener], listing: TLSListing) {
        self.https = https
        self.catalogue = catalogue
        self.listeners = listeners
        self.listing = listing
    }

    /// Starts them all, or none: on an error the ones started are stopped and it is thrown.
    /// `main` is the instance's own server, whose URL is the HTTPS one when it speaks HTTPS.
    static func start(_ options: TLSOptions, server: ServerConfiguration, main: HTTPServer, responder: any Responder,
                      observer: (any RequestObserver)?, logger: Logger) throws -> SecureServers {
        var https: HTTPServer?
        if !options.replacesPlainHTTP {
            var configuration = server
            configuration.port = options.port
            configuration.tls = options.settings
            let started = HTTPServer(configuration: configuration, responder: responder, observer: observer, logger: logger)
            try started.start()
            https = started
        }
        var started: [HTTPServer] = []
        var listeners: [HandshakeFaultListener] = []
        var failures: [TLSListing.Failure] = []
        do {
            for (index, (failure, personality)) in options.catalogue.enumerated() {
                let port = options.cataloguePort == 0 ? 0 : options.cataloguePort &+ UInt16(truncatingIfNeeded: index)
                let url: String
                let bound: UInt16
                switch personality {
                case .tls(let identity, let priorities):
                    var settings = server
                    settings.port = port
                    settings.threads = 1
                    settings.connectionLimit = catalogueConnectionLimit
                    settings.tls = TLSSettings(certificateChainPEM: identity.certificateChainPEM,
                                               privateKeyPEM: identity.privateKeyPEM, priorities: priorities)
                    let catalogueServer = HTTPServer(configuration: settings, responder: responder, observer: observer, logger: logger)
                    try catalogueServer.start()
                    started.append(catalogueServer)
                    bound = catalogueServer.port ?? port
                    url = catalogueServer.url ?? ""
                case .resetAfterHello, .stall:
                    let listener = try HandshakeFaultListener(host: server.host, port: port,
                                                              behaviour: personality.isReset ? .resetAfterHello : .stall)
                    listeners.append(listener)
                    bound = listener.port
                    url = HTTPServer.url(scheme: "https", host: server.host, port: bound)
                }
                failures.append(TLSListing.Failure(failure: failure, url: url, port: bound))
            }
        } catch {
            https?.stop()
            for started in started { started.stop() }
            for listener in listeners { listener.stop() }
            throw error
        }
        let listing = TLSListing(url: (https ?? main).url ?? "", pin: options.identity.pin,
                                 caCertificate: options.caCertificatePath, failures: failures)
        return SecureServers(https: https, catalogue: started, listeners: listeners, listing: listing)
    }

    /// Stops every server (the HTTPS one with `grace` for requests in flight) and listener;
    /// returns the requests cut short.
    func stop(grace: Duration) -> Int {
        for listener in listeners { listener.stop() }
        var cut = 0
        for server in catalogue { cut += server.stop() }
        return cut + (https?.stop(grace: grace) ?? 0)
    }
}

extension TLSPersonality {
    /// Whether it is the reset after the ClientHello.
    var isReset: Bool {
        if case .resetAfterHello = self { return true }
        return false
    }
}
