import MishapHTTP
import MishapTLS

/// HTTPS beside plain HTTP: the port, what it presents, and the TLS failure catalogue.
public struct TLSOptions: Sendable {
    /// The HTTPS port; 0 picks a free one.
    public var port: UInt16
    /// The certificate chain and key the HTTPS port presents.
    public var identity: TLSIdentity
    /// The certificate authority's certificate file, for the listing; nil with the user's own certificate.
    public var caCertificatePath: String?
    /// The catalogue's failures and how each port behaves; empty for no catalogue.
    public var catalogue: [(TLSFailure, TLSPersonality)]
    /// The catalogue's first port, the others following in catalogue order; 0 picks free ports.
    public var cataloguePort: UInt16
    /// HTTPS instead of plain HTTP (`--port off`): the server of the configuration speaks
    /// HTTPS on `port`, and there is no second one.
    public var replacesPlainHTTP: Bool

    public init(port: UInt16, identity: TLSIdentity, caCertificatePath: String? = nil,
                catalogue: [(TLSFailure, TLSPersonality)] = [], cataloguePort: UInt16 = 0, replacesPlainHTTP: Bool = false) {
        self.port = port
        self.identity = identity
        self.caCertificatePath = caCertificatePath
        self.catalogue = catalogue
        self.cataloguePort = cataloguePort
        self.replacesPlainHTTP = replacesPlainHTTP
    }

    /// What the HTTPS server presents, for `ServerConfiguration.tls`.
    var settings: TLSSettings {
        TLSSettings(certificateChainPEM: identity.certificateChainPEM, privateKeyPEM: identity.privateKeyPEM)
    }
}
