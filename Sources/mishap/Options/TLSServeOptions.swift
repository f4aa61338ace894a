import ArgumentParser
import MishapService
import MishapSupport
import MishapTLS

/// The HTTPS options of `serve` (and `start`): the port, the certificate authority folder or
/// the user's own certificate, extra names, and the TLS failure catalogue.
struct TLSServeOptions: ParsableArguments {
    @Option(name: .customLong("tls-port"), help: ArgumentHelp("Also serve HTTPS on this port (0 picks a free one), with a certificate from the local certificate authority (see 'mishap tls'), and the TLS failure catalogue on ports of its own.", valueName: "port"))
    var port: Int?

    @Option(name: .customLong("tls-dir"), help: ArgumentHelp("The local certificate authority's folder, made on first use (default: $MISHAP_TLS_DIR, else $XDG_DATA_HOME/mishap/tls, else ~/.local/share/mishap/tls).", valueName: "dir"))
    var directory: String?

    @Option(name: .customLong("tls-name"), help: ArgumentHelp("Another host name or address for the server's certificate, besides localhost, 127.0.0.1, ::1 and this machine's name (repeatable). The local authority vouches only for the names it was made with: one added later is left out, with a warning, and needs a new authority. 10.0.2.2 is this machine from the Android emulator.", valueName: "name"))
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

    /// HTTPS as these options ask for it, for `MishapInstance` to make: nil without
    /// `--tls-port`. `replacingPlainHTTP` (`--port off`): HTTPS instead of HTTP, not beside it.
    func setup(replacingPlainHTTP: Bool) -> TLSSetup? {
        guard let port else { return nil }
        return TLSSetup(port: UInt16(port), directory: directory, names: names,
                        ownCertificate: certificate.flatMap { certificate in key.map { (certificate, $0) } },
                        cataloguePort: UInt16(cataloguePort), catalogue: !noCatalogue, replacesPlainHTTP: replacingPlainHTTP)
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
