/// What a TLS server presents: its certificate chain (the server's certificate first, then any
/// intermediates) and its private key, as PEM texts for libmicrohttpd, and the key's pin.
public struct TLSIdentity: Sendable {
    /// The chain's certificates, PEM, concatenated.
    public var certificateChainPEM: String
    /// The private key, PEM. Never logged.
    public var privateKeyPEM: String
    /// The SHA-256 SPKI pin of the key, Base64.
    public var pin: String

    public init(certificateChainPEM: String, privateKeyPEM: String, pin: String) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
        self.pin = pin
    }

    /// The identity of `chain` (the server's certificate first) and its `key`.
    public init(chain: [Certificate], key: PrivateKey) throws(TLSError) {
        var pem = ""
        for certificate in chain { pem += try certificate.pem() }
        self.init(certificateChainPEM: pem, privateKeyPEM: try key.pem(), pin: try key.spkiPin())
    }

    /// An identity read from the user's own PEM files' texts (`--tls-cert`, `--tls-key`):
    /// checked to be a certificate and its key.
    public static func read(certificatePEM: String, keyPEM: String) throws(TLSError) -> TLSIdentity {
        let certificate = try Certificate.read(pem: certificatePEM)
        let key = try PrivateKey.read(pem: keyPEM)
        let pin = try key.spkiPin()
        // Caught here, where it can be said plainly: GnuTLS would only fail to start TLS.
        guard try certificate.spkiPin() == pin else {
            throw TLSError("the key is not the certificate's (the first certificate of the file is for another key)")
        }
        return TLSIdentity(certificateChainPEM: certificatePEM, privateKeyPEM: keyPEM, pin: pin)
    }
}
