import ArgumentParser
import Logging
import MishapService
import MishapSupport
import MishapTLS

/// The HTTPS options of `serve` (and `start`): the port, the certificate authority folder or
/// the user's own certificate, extra names, and the TLS failure catalogue.
struct TLSServeOptions: ParsableArguments {
    @Option(name: .customLong("tls-port"), help: ArgumentHelp("Also serve HTTPS on this port (0 picks a free one), with a certificate from the local certificate authority (see 'mishap tls'), and the TLS failure catalogue on ports of its own.", valueName: "port"))
    var port: Int?

    @Option(name: .customLong("tls-dir"), help: ArgumentHelp("The local certificate authority's folder, made on first use (default: $MISHAP_TLS_DIR, else ~/.local/share/mishap/tls).", valueName: "dir"))
    var directory: String?

    @Option(name: .customLong("tls-name"), help: ArgumentHelp("Another host name or address for the server's certificate, besides localhost, 127.0.0.1, ::1 and this machine's name (repeatable). The local authority vouches only for the names it was made with: one added later is left out, with a warning, and needs a new authority.", valueName: "name"))
    var names: [String] = []

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("Serve HTTPS with this certificate (PEM, the chain after it) instead of one from the local authority; needs --tls-key. The catalogue is then off.", valueName: "path"))
    var certificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The private key (PEM, unencrypted) of --tls-cert.", valueName: "path"))
    var key: String?

    @Option(name: .customLong("tls-catalogue-port"), help: ArgumentHelp("The TLS failure catalogue's first port, the others following in order (0 picks free ports).", valueName: "port"))
    var cataloguePort: Int = 0

    @Flag(name: .customLong("no-tls-catalogue"), help: "Serve HTTPS without the TLS failure catalogue.")
    var noCatalogue = false

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--tls-port must be from 0 to 65535") }
        guard (0...65535).contains(cataloguePort) else { throw ValidationError("--tls-catalogue-port must be from 0 to 65535") }
        if cataloguePort > 0 && cataloguePort + TLSFailure.allCases.count - 1 > 65535 {
            throw ValidationError("--tls-catalogue-port leaves no room for the catalogue's \(TLSFailure.allCases.count) ports")
        }
        if (certificate == nil) != (key == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
        if port == nil {
            for (flag, given) in [("--tls-dir", directory != nil), ("--tls-name", !names.isEmpty), ("--tls-cert", certificate != nil),
                                  ("--tls-catalogue-port", cataloguePort != 0), ("--no-tls-catalogue", noCatalogue)] where given {
                throw ValidationError("\(flag) needs --tls-port")
            }
        }
        for name in names where name.isEmpty || name.contains(where: { $0.isWhitespace || $0 == "," }) {
            throw ValidationError("--tls-name '\(name)' is not a host name or address")
        }
    }

    /// The authority's folder: `--tls-dir`, else the default.
    var folder: String { directory ?? CertificateAuthority.defaultDirectory() }

    /// What the server needs to serve HTTPS, made now: nil without `--tls-port`. Makes the local
    /// authority on first use (and says so). `replacingPlainHTTP` (`--port off`): HTTPS instead
    /// of HTTP, not beside it.
    func make(host: String, replacingPlainHTTP: Bool, logger: Logger) throws(TLSError) -> TLSOptions? {
        guard let port else { return nil }
        let now = WallClock.nowSeconds()
        if let certificate, let key {
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
            return TLSOptions(port: UInt16(port), identity: identity, replacesPlainHTTP: replacingPlainHTTP)
        }
        var extra = names
        if !isLoopback(host: host) && host != "0.0.0.0" && host != "::" { extra.append(host) }
        let (authority, created) = try CertificateAuthority.openOrCreate(directory: folder, now: now, names: extra)
        if created {
            logger.notice("made a local certificate authority in \(folder), for \(authority.certificate.nameConstraints?.description ?? "") only; trust \(authority.path(CertificateAuthority.certificateFile)) on your devices ('mishap tls trust' says how)")
        }
        for warning in authority.warnings(now: now) { logger.warning("\(warning)") }
        let certificateNames = Self.certificateNames(CertificateAuthority.defaultNames(extra: extra), asked: extra,
                                                     authority: authority, logger: logger)
        let identity = try authority.issueServerIdentity(names: certificateNames, now: now)
        let catalogue = noCatalogue ? [] : try TLSCatalogue.make(authority: authority, names: certificateNames, now: now)
        return TLSOptions(port: UInt16(port), identity: identity, caCertificatePath: authority.path(CertificateAuthority.certificateFile),
                          catalogue: catalogue, cataloguePort: UInt16(cataloguePort), replacesPlainHTTP: replacingPlainHTTP)
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

    /// These options as arguments of `serve` (see `ServeOptions.arguments`).
    var arguments: [String] {
        var arguments: [String] = []
        if let port { arguments.append("--tls-port=\(port)") }
        if let directory { arguments.append("--tls-dir=\(directory)") }
        arguments += names.map { "--tls-name=\($0)" }
        if let certificate { arguments.append("--tls-cert=\(certificate)") }
        if let key { arguments.append("--tls-key=\(key)") }
        arguments.append("--tls-catalogue-port=\(cataloguePort)")
        if noCatalogue { arguments.append("--no-tls-catalogue") }
        return arguments
    }
}
