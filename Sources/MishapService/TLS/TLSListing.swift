import MishapEngine
import MishapTLS

/// Where Mishap serves HTTPS and each failure of the TLS failure catalogue, and what a client
/// should report there: the startup output and `GET /__mishap/tls` say it.
public struct TLSListing: Sendable {
    /// The HTTPS URL whose handshake succeeds (with the local CA trusted), e.g. `https://127.0.0.1:8443`.
    public var url: String
    /// The SHA-256 SPKI pin of the server key, Base64, for apps that pin.
    public var pin: String
    /// The certificate authority's certificate file clients trust; nil with the user's own certificate.
    public var caCertificate: String?
    /// The catalogue, in order.
    public var failures: [Failure]

    /// One failure's port.
    public struct Failure: Sendable {
        public var failure: TLSFailure
        public var url: String
        public var port: UInt16
    }

    public init(url: String, pin: String, caCertificate: String?, failures: [Failure]) {
        self.url = url
        self.pin = pin
        self.caCertificate = caCertificate
        self.failures = failures
    }

    /// The listing as JSON.
    var json: JSON {
        .object([
            ("url", .string(url)),
            ("pin", .string("sha256/" + pin)),
            ("caCertificate", .optional(caCertificate)),
            ("failures", .array(failures.map { entry in
                .object([
                    ("name", .string(entry.failure.rawValue)),
                    ("url", .string(entry.url)),
                    ("port", .int(Int(entry.port))),
                    ("server", .string(entry.failure.summary)),
                    ("clientReports", .string(entry.failure.clientReport)),
                ])
            })),
        ])
    }

}

extension AdminAPI {
    /// `GET /__mishap/tls`: the HTTPS URL, the server key's pin, the CA file and the catalogue.
    func tls() -> ResponsePlan {
        guard let listing = service.tls.withLock({ $0 }) else {
            return Self.error(404, "HTTPS is off: start Mishap with --tls-port (0 picks a free port)")
        }
        return Self.json(200, listing.json)
    }
}
