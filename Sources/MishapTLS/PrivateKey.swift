import CGnuTLS
import MishapSupport

/// A private key (ECDSA on the P-256 curve, which every TLS client accepts and which takes a
/// millisecond to make), as GnuTLS holds it. Written only as PEM files of mode 0600; its text
/// is never logged.
public final class PrivateKey: @unchecked Sendable {
    let key: gnutls_x509_privkey_t

    private init(key: gnutls_x509_privkey_t) {
        self.key = key
    }

    deinit {
        gnutls_x509_privkey_deinit(key)
    }

    /// A new random key.
    public static func generate() throws(TLSError) -> PrivateKey {
        var key: gnutls_x509_privkey_t?
        try TLSError.check(gnutls_x509_privkey_init(&key), "preparing a private key")
        guard let key else { throw TLSError("preparing a private key: no memory") }
        let made = PrivateKey(key: key)
        try TLSError.check(gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA, mishap_gnutls_curve_bits(GNUTLS_ECC_CURVE_SECP256R1), 0),
                           "generating an ECDSA P-256 key")
        return made
    }

    /// The key in a PEM text (PKCS #8 or the older forms, unencrypted).
    public static func read(pem: String) throws(TLSError) -> PrivateKey {
        var key: gnutls_x509_privkey_t?
        try TLSError.check(gnutls_x509_privkey_init(&key), "preparing a private key")
        guard let key else { throw TLSError("preparing a private key: no memory") }
        let made = PrivateKey(key: key)
        try Datum.withDatum(pem) { (datum: UnsafePointer<gnutls_datum_t>) throws(TLSError) in
            try TLSError.check(gnutls_x509_privkey_import2(key, datum, GNUTLS_X509_FMT_PEM, nil, UInt32(GNUTLS_PKCS_PLAIN.rawValue)),
                               "reading the private key (an unencrypted PEM key)")
        }
        return made
    }

    /// The key as an unencrypted PKCS #8 PEM text.
    public func pem() throws(TLSError) -> String {
        var datum = gnutls_datum_t()
        try TLSError.check(gnutls_x509_privkey_export2_pkcs8(key, GNUTLS_X509_FMT_PEM, nil, UInt32(GNUTLS_PKCS_PLAIN.rawValue), &datum),
                           "writing the private key")
        return Datum.take(&datum)
    }

    /// The SHA-256 pin of the key's public half, Base64: the SHA-256 hash of its DER
    /// SubjectPublicKeyInfo, which is what apps pin (`pin-sha256`, TrustKit, OkHttp's
    /// CertificatePinner after `sha256/`).
    public func spkiPin() throws(TLSError) -> String {
        var bytes = [UInt8](repeating: 0, count: 64)
        var size = bytes.count
        try TLSError.check(gnutls_x509_privkey_get_key_id(key, UInt32(GNUTLS_KEYID_USE_SHA256.rawValue), &bytes, &size),
                           "computing the key's SHA-256 pin")
        return Base64.encode(Array(bytes[..<size]))
    }
}
