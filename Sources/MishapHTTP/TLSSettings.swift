import MishapSupport

/// What the server needs to speak HTTPS instead of HTTP: libmicrohttpd does the TLS (with
/// GnuTLS) from these texts; where they come from (a local certificate authority, the user's
/// files, the TLS failure catalogue) is not the server's business.
public struct TLSSettings: Sendable {
    /// The certificate chain, PEM: the server's certificate first, then any intermediates.
    public var certificateChainPEM: String
    /// The private key, PEM. Never logged.
    public var privateKeyPEM: String
    /// GnuTLS priorities (protocol versions and ciphers), e.g. TLS 1.0 and 1.1 only for the
    /// catalogue's `old-protocol`; nil for GnuTLS's defaults.
    public var priorities: String?

    public init(certificateChainPEM: String, privateKeyPEM: String, priorities: String? = nil) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
        self.priorities = priorities
    }
}

extension TLSSettings: CustomStringConvertible {
    /// Says that there is a key, never what it is.
    public var description: String {
        "TLSSettings(certificate chain of \(certificateChainPEM.utf8.count) bytes, private key withheld, priorities: \(priorities ?? "default"))"
    }
}

/// `TLSSettings` as the C strings libmicrohttpd takes, freed (the key's bytes wiped first) when
/// the daemon no longer needs them.
final class TLSStrings: @unchecked Sendable {
    let key: UnsafeMutablePointer<CChar>
    let certificate: UnsafeMutablePointer<CChar>
    let priorities: UnsafeMutablePointer<CChar>?

    init(_ settings: TLSSettings) {
        key = CString.copy(settings.privateKeyPEM)
        certificate = CString.copy(settings.certificateChainPEM)
        priorities = settings.priorities.map { CString.copy($0) }
    }

    deinit {
        CString.free(key, wiping: true)
        CString.free(certificate)
        CString.free(priorities)
    }
}
