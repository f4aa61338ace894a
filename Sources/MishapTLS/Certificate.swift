import CGnuTLS
import MishapSupport

/// An X.509 certificate, as GnuTLS holds it: issued here from a `CertificateRequest`, or read
/// from a PEM file.
public final class Certificate: @unchecked Sendable {
    let certificate: gnutls_x509_crt_t

    private init(certificate: gnutls_x509_crt_t) {
        self.certificate = certificate
    }

    deinit {
        gnutls_x509_crt_deinit(certificate)
    }

    /// A certificate with nothing in it yet, to fill in or read into.
    private static func empty() throws(TLSError) -> Certificate {
        var certificate: gnutls_x509_crt_t?
        try TLSError.check(gnutls_x509_crt_init(&certificate), "preparing a certificate")
        guard let certificate else { throw TLSError("preparing a certificate: no memory") }
        return Certificate(certificate: certificate)
    }

    /// Issues a certificate for `key`'s public half, signed by `issuer` (its certificate and
    /// key), or by `key` itself when `issuer` is nil (self-signed). Serial numbers are random.
    public static func issue(_ request: CertificateRequest, key: PrivateKey,
                             issuer: (certificate: Certificate, key: PrivateKey)?) throws(TLSError) -> Certificate {
        let made = try empty()
        let crt = made.certificate
        try TLSError.check(gnutls_x509_crt_set_version(crt, 3), "setting the certificate's version")
        var serial = [UInt8](repeating: 0, count: 16)
        try TLSError.check(gnutls_rnd(GNUTLS_RND_NONCE, &serial, serial.count), "making a serial number")
        serial[0] &= 0x7F  // positive
        serial[0] |= 0x01  // and not starting with a zero byte
        try TLSError.check(gnutls_x509_crt_set_serial(crt, serial, serial.count), "setting the serial number")
        try TLSError.check(gnutls_x509_crt_set_activation_time(crt, time_t(request.notBefore)), "setting the start of validity")
        try TLSError.check(gnutls_x509_crt_set_expiration_time(crt, time_t(request.notAfter)), "setting the end of validity")
        try TLSError.check(gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, request.commonName, UInt32(request.commonName.utf8.count)),
                           "setting the subject name")
        try TLSError.check(gnutls_x509_crt_set_key(crt, key.key), "setting the certificate's key")
        if let authority = request.authority {
            try TLSError.check(gnutls_x509_crt_set_basic_constraints(crt, 1, Int32(authority.pathLength ?? -1)), "marking it an authority")
            try TLSError.check(gnutls_x509_crt_set_key_usage(crt, UInt32(GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN | GNUTLS_KEY_DIGITAL_SIGNATURE)),
                               "setting the key usage")
            if let permitted = authority.permittedNames {
                try permitted.withGnuTLS { (constraints: gnutls_x509_name_constraints_t) throws(TLSError) in
                    // Critical, as RFC 5280 requires: a client that cannot check them must refuse.
                    try TLSError.check(gnutls_x509_crt_set_name_constraints(crt, constraints, 1), "setting the name constraints")
                }
            }
        } else {
            try TLSError.check(gnutls_x509_crt_set_basic_constraints(crt, 0, -1), "marking it a server's")
            try TLSError.check(gnutls_x509_crt_set_key_usage(crt, UInt32(GNUTLS_KEY_DIGITAL_SIGNATURE)), "setting the key usage")
            try TLSError.check(gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0), "setting the purpose (a TLS server)")
        }
        for name in request.dnsNames {
            try TLSError.check(gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, name, UInt32(name.utf8.count), UInt32(GNUTLS_FSAN_APPEND)),
                               "adding the name \(name)")
        }
        for address in request.ipAddresses {
            guard let bytes = IPAddressBytes.parse(address) else { throw TLSError("\(address) is not an IP address") }
            try TLSError.check(gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, bytes, UInt32(bytes.count), UInt32(GNUTLS_FSAN_APPEND)),
                               "adding the address \(address)")
        }
        // Key identifiers, which chain building uses to find an issuer.
        var keyID = [UInt8](repeating: 0, count: 64)
        var keyIDSize = keyID.count
        try TLSError.check(gnutls_x509_privkey_get_key_id(key.key, 0, &keyID, &keyIDSize), "computing the key identifier")
        try TLSError.check(gnutls_x509_crt_set_subject_key_id(crt, keyID, keyIDSize), "setting the key identifier")
        let signer = issuer ?? (made, key)
        var issuerID = [UInt8](repeating: 0, count: 64)
        var issuerIDSize = issuerID.count
        try TLSError.check(gnutls_x509_privkey_get_key_id(signer.key.key, 0, &issuerID, &issuerIDSize), "computing the issuer's key identifier")
        try TLSError.check(gnutls_x509_crt_set_authority_key_id(crt, issuerID, issuerIDSize), "setting the issuer's key identifier")
        try TLSError.check(gnutls_x509_crt_sign2(crt, signer.certificate.certificate, signer.key.key, GNUTLS_DIG_SHA256, 0), "signing the certificate")
        return made
    }

    /// The first certificate of a PEM text.
    public static func read(pem: String) throws(TLSError) -> Certificate {
        let made = try empty()
        try Datum.withDatum(pem) { (datum: UnsafePointer<gnutls_datum_t>) throws(TLSError) in
            try TLSError.check(gnutls_x509_crt_import(made.certificate, datum, GNUTLS_X509_FMT_PEM), "reading the certificate (a PEM certificate)")
        }
        return made
    }

    /// The certificate as a PEM text.
    public func pem() throws(TLSError) -> String {
        var datum = gnutls_datum_t()
        try TLSError.check(gnutls_x509_crt_export2(certificate, GNUTLS_X509_FMT_PEM, &datum), "writing the certificate")
        return Datum.take(&datum)
    }

    /// The last second it is valid, in seconds since the epoch.
    public var notAfter: Int { Int(gnutls_x509_crt_get_expiration_time(certificate)) }

    /// The first second it is valid, in seconds since the epoch.
    public var notBefore: Int { Int(gnutls_x509_crt_get_activation_time(certificate)) }

    /// The names an authority may vouch for (its name constraints); nil when it has none.
    public var nameConstraints: NameConstraints? { NameConstraints.read(from: certificate) }

    /// The SHA-1 fingerprint of the certificate, in upper-case hex without separators, as
    /// macOS's `security delete-certificate -Z` takes it.
    public func sha1Fingerprint() throws(TLSError) -> String {
        var bytes = [UInt8](repeating: 0, count: 20)
        var size = bytes.count
        try TLSError.check(gnutls_x509_crt_get_fingerprint(certificate, GNUTLS_DIG_SHA1, &bytes, &size), "computing the fingerprint")
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: bytes[..<size].flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] }, as: UTF8.self)
    }

    /// The subject's common name.
    public var commonName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        var size = buffer.count
        guard gnutls_x509_crt_get_dn_by_oid(certificate, GNUTLS_OID_X520_COMMON_NAME, 0, 0, &buffer, &size) >= 0 else { return "" }
        return String(decoding: buffer[..<min(size, buffer.count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The SHA-256 pin of the certificate's public key, Base64 (as `PrivateKey.spkiPin`).
    public func spkiPin() throws(TLSError) -> String {
        var bytes = [UInt8](repeating: 0, count: 64)
        var size = bytes.count
        try TLSError.check(gnutls_x509_crt_get_key_id(certificate, UInt32(GNUTLS_KEYID_USE_SHA256.rawValue), &bytes, &size),
                           "computing the certificate's SHA-256 pin")
        return Base64.encode(Array(bytes[..<size]))
    }
}
