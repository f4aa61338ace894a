import ArgumentParser
import MishapSupport
import MishapTLS

/// `mishap tls`: the local certificate authority HTTPS is served with.
struct TLSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tls",
        abstract: "The local certificate authority that 'serve --tls-port' issues its certificates from.",
        discussion: """
            'mishap tls init' makes the authority once (serve makes it too, on first use); \
            'mishap tls trust' prints how to trust it on a simulator, a machine, curl, Python and \
            Android, how to remove it, and the pin of the server key for apps that pin. The \
            authority may vouch only for the names it was made for (localhost, the loopback \
            addresses, this machine's name, each --name, and the catalogue's wrong.host.invalid) \
            and lasts 400 days: other names, or another year, need a new one.
            """,
        subcommands: [TLSInit.self, TLSTrust.self]
    )
}

/// The `--dir` option of the `tls` subcommands.
struct TLSFolderOption: ParsableArguments {
    @Option(name: .customLong("dir"), help: ArgumentHelp("The authority's folder (default: $MISHAP_TLS_DIR, else $XDG_DATA_HOME/mishap/tls, else ~/.local/share/mishap/tls), as serve's --tls-dir.", valueName: "dir"))
    var directory: String?

    var folder: String { directory ?? CertificateAuthority.defaultDirectory() }
}

/// `mishap tls init`: makes the authority.
struct TLSInit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Make the local certificate authority: ca.pem (to trust), ca-key.pem and server-key.pem (mode 0600).",
        discussion: "The authority lasts 400 days and may vouch only for localhost, the loopback addresses, this machine's name, the catalogue's wrong.host.invalid and each --name. Exits 1 when the folder already holds one: devices that trust it would stop trusting a new one."
    )

    @OptionGroup var folderOption: TLSFolderOption

    @Option(name: .customLong("name"), help: ArgumentHelp("Another host name or address the authority may vouch for, besides localhost, the loopback addresses, this machine's name and wrong.host.invalid (repeatable; serve's --tls-name for it). None can be added later.", valueName: "name"))
    var names: [String] = []

    func validate() throws {
        for name in names where name.isEmpty || name.contains(where: { $0.isWhitespace || $0 == "," }) {
            throw ValidationError("--name '\(name)' is not a host name or address")
        }
    }

    func run() throws {
        let folder = folderOption.folder
        do throws(TLSError) {
            let authority = try CertificateAuthority.create(directory: folder, now: WallClock.nowSeconds(), names: names)
            print("made a local certificate authority in \(folder), valid until \(CertificateAuthority.day(authority.certificate.notAfter))")
            print("  it may vouch for \(authority.certificate.nameConstraints?.description ?? "") only (other names need a new one)")
            print("  \(authority.path(CertificateAuthority.certificateFile))  the certificate to trust")
            print("  \(authority.path(CertificateAuthority.keyFile))  its key (mode 0600: keep it private)")
            print("  \(authority.path(CertificateAuthority.serverKeyFile))  the server's key (mode 0600), pin sha256/\(try authority.serverKey.spkiPin())")
            print("next: 'mishap tls trust' says how to trust it; 'mishap serve --tls-port 8443' serves HTTPS with it")
        } catch {
            printError("mishap: \(error)")
            throw ExitCode.failure
        }
    }
}
