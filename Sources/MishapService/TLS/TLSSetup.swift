import Logging
import MishapSupport
import MishapTLS

/// HTTPS as `serve` is asked for it (its `--tls-*` options), before anything is read or made:
/// the port, and either the local certificate authority's folder and extra names or the
/// user's own certificate and key, and the TLS failure catalogue. `MishapInstance` makes the
/// `TLSOptions` of it as it starts (`make`): the authority opened or made, certificates issued.
public struct TLSSetup: Sendable {
    /// The HTTPS port; 0 picks a free one.
    public var port: UInt16
    /// The local authority's folder (`--tls-dir`); nil for the default
    /// (`CertificateAuthority.defaultDirectory()`).
    public var directory: String?
    /// Host names or addresses the certificate names besides the defaults (`--tls-name`).
    public var names: [String]
    /// The user's own certificate (PEM, its chain after it) and key files, instead of the
    /// authority's (`--tls-cert`, `--tls-key`); nil for the authority's.
    public var ownCertificate: (certificate: String, key: String)?
    /// The catalogue's first port, the others following in order; 0 picks free ports.
    public var cataloguePort: UInt16
    /// Whether the TLS failure catalogue is served (off with the user's own certificate).
    public var catalogue: Bool
    /// HTTPS instead of plain HTTP (`--port off`), not beside it.
    public var replacesPlainHTTP: Bool

    public init(port: UInt16, directory: String? = nil, names: [String] = [],
                ownCertificate: (certificate: String, key: String)? = nil, cataloguePort: UInt16 = 0,
                catalogue: Bool = true, replacesPlainHTTP: Bool = false) {
        self.port = port
        self.directory = directory
        self.names = names
        self.ownCertificate = ownCertificate
        self.cataloguePort = cataloguePort
        self.catalogue = catalogue
        self.replacesPlainHTTP = replacesPlainHTTP
    }

    /// The authority's folder: `directory`, else the default.
    public var folder: String { directory ?? CertificateAuthority.defaultDirectory() }

    /// What the servers need to serve HTTPS for a server listening on `host`, made now: the
    /// local authority made on first use (and said so), or the user's own certificate read.
    func make(host: String, logger: Logger) throws(TLSError) -> TLSOptions {
        let now = WallClock.nowSeconds()
        if let (certificate, key) = ownCertificate {
            // Said, not refused: `start` hands every option over, and these are harmless here.
            let unused = [("--tls-dir", directory != nil), ("--tls-name", !names.isEmpty), ("--tls-catalogue-port", cataloguePort != 0)]
                .filter(\.1).map(\.0)
            if !unused.isEmpty {
                logger.warning("\(unused.joined(separator: ", ")) ignored with --tls-cert: they apply to certificates from the local authority, and the catalogue is off")
            }
            guard let certificateText = FileSystem.readText(certificate) else { throw TLSError("cannot read --tls-cert \(certificate)") }
            guard let keyText = FileSystem.readText(key) else { throw TLSError("cannot read --tls-key \(key)") }
            let identity: TLSIdentity
            do throws(TLSError) {
                identity = try TLSIdentity.read(certificatePEM: certificateText, keyPEM: keyText)
            } catch {
                throw TLSError("--tls-cert \(certificate), --tls-key \(key): \(error)")
            }
            return TLSOptions(port: port, identity: identity, replacesPlainHTTP: replacesPlainHTTP)
        }
        var extra = names
        if !MishapInstance.isLoopback(host: host) && host != "0.0.0.0" && host != "::" { extra.append(host) }
        let (authority, created) = try CertificateAuthority.openOrCreate(directory: folder, now: now, names: extra)
        if created {
            logger.notice("made a local certificate authority in \(folder), for \(authority.certificate.nameConstraints?.description ?? "") only; trust \(authority.path(CertificateAuthority.certificateFile)) on your devices ('mishap tls trust' says how)")
        }
        for warning in authority.warnings(now: now) { logger.warning("\(warning)") }
        let certificateNames = Self.certificateNames(CertificateAuthority.defaultNames(extra: extra), asked: extra,
                                                     authority: authority, logger: logger)
        let identity = try authority.issueServerIdentity(names: certificateNames, now: now)
        let catalogue = catalogue ? try TLSCatalogue.make(authority: authority, names: certificateNames, now: now) : []
        return TLSOptions(port: port, identity: identity, caCertificatePath: authority.path(CertificateAuthority.certificateFile),
                          catalogue: catalogue, cataloguePort: cataloguePort, replacesPlainHTTP: replacesPlainHTTP)
    }

    /// The names of `wanted` the authority may vouch for. A certificate naming one it may not
    /// is refused whole, for every name, so the others are left out: with a warning for those
    /// `asked` for (`--tls-name`, `--host`), which need a new authority; quietly for this
    /// machine's name, which changes (a container's is new at every run).
    static func certificateNames(_ wanted: [String], asked: [String], authority: CertificateAuthority, logger: Logger) -> [String] {
        let outside = wanted.filter { !authority.permits($0) }
        guard !outside.isEmpty else { return wanted }
        let askedOutside = outside.filter { name in asked.contains { $0.lowercased() == name.lowercased() } }
        let message = "left out of the HTTPS certificate: \(outside.joined(separator: ", ")); the local certificate authority in "
            + "\(authority.directory) vouches for \(authority.certificate.nameConstraints?.description ?? "") only, and names "
            + "cannot be added to it: for these, make a new one (\(CertificateAuthority.renewal(authority.directory))) "
            + "and trust its ca.pem"
        if askedOutside.isEmpty { logger.debug("\(message)") } else { logger.warning("\(message)") }
        return wanted.filter(authority.permits)
    }
}
