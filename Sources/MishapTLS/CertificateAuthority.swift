import MishapSupport

/// Mishap's local certificate authority: a folder with the authority's certificate (`ca.pem`,
/// the file users trust), its key (`ca-key.pem`) and the server's key (`server-key.pem`), both
/// written with mode 0600. `mishap tls init` makes it once; every `serve --tls-port` then
/// issues a fresh server certificate from it for the names asked, always for the same server
/// key, so an app's SPKI pin stays valid across restarts.
public struct CertificateAuthority: Sendable {
    /// The folder.
    public let directory: String
    /// The authority's certificate, which clients trust.
    public let certificate: Certificate
    /// The authority's key, which signs.
    public let key: PrivateKey
    /// The key every server certificate is issued for.
    public let serverKey: PrivateKey

    /// The file names inside the folder.
    public static let certificateFile = "ca.pem"
    public static let keyFile = "ca-key.pem"
    public static let serverKeyFile = "server-key.pem"

    /// How long the authority is valid: ten years.
    static let authorityDays = 3650
    /// How long a server certificate is valid: 397 days, within what Apple's platforms accept
    /// for a TLS server certificate (825 days for a certificate from a root the user added).
    public static let serverDays = 397

    /// The default folder: `$MISHAP_TLS_DIR`, else `$XDG_DATA_HOME/mishap/tls`, else
    /// `~/.local/share/mishap/tls`.
    public static func defaultDirectory(environment: (String) -> String? = Self.variable) -> String {
        if let folder = environment("MISHAP_TLS_DIR"), !folder.isEmpty { return folder }
        if let data = environment("XDG_DATA_HOME"), !data.isEmpty { return data + "/mishap/tls" }
        return (environment("HOME") ?? ".") + "/.local/share/mishap/tls"
    }

    /// An environment variable of this process.
    public static func variable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The path of a file in the folder.
    public func path(_ file: String) -> String { directory + "/" + file }

    /// Whether the folder holds an authority (its certificate file exists).
    public static func exists(directory: String) -> Bool {
        FileSystem.readText(directory + "/" + certificateFile) != nil
    }

    /// Makes a new authority in `directory` (created, mode 0700, if missing). Refuses when the
    /// folder already holds one: replacing it would break every device that trusts it.
    public static func create(directory: String, now: Int, name: String = "Mishap Local CA") throws(TLSError) -> CertificateAuthority {
        if exists(directory: directory) {
            throw TLSError("\(directory) already holds a certificate authority (\(certificateFile)); remove the folder to make a new one")
        }
        if let problem = FileSystem.makeFolders(directory, mode: 0o700) { throw TLSError(problem) }
        let key = try PrivateKey.generate()
        let request = CertificateRequest(commonName: name, notBefore: now - 3600, notAfter: now + authorityDays * 86_400,
                                         authority: CertificateRequest.Authority(pathLength: 1))
        let certificate = try Certificate.issue(request, key: key, issuer: nil)
        let serverKey = try PrivateKey.generate()
        // Keys first: a folder left without its certificate is not taken for a finished one.
        for (file, text, mode) in [(keyFile, try key.pem(), mode_t(0o600)), (serverKeyFile, try serverKey.pem(), mode_t(0o600)),
                                   (certificateFile, try certificate.pem(), mode_t(0o644))] {
            if let problem = FileSystem.createFile(directory + "/" + file, text: text, mode: mode) { throw TLSError(problem) }
        }
        return CertificateAuthority(directory: directory, certificate: certificate, key: key, serverKey: serverKey)
    }

    /// Reads the authority in `directory`.
    public static func open(directory: String) throws(TLSError) -> CertificateAuthority {
        func read(_ file: String) throws(TLSError) -> String {
            guard let text = FileSystem.readText(directory + "/" + file) else {
                throw TLSError("cannot read \(directory)/\(file): \(exists(directory: directory) ? "missing or unreadable" : "no certificate authority there; make one with 'mishap tls init'")")
            }
            return text
        }
        let certificate: Certificate
        let key: PrivateKey
        let serverKey: PrivateKey
        do throws(TLSError) {
            certificate = try Certificate.read(pem: try read(certificateFile))
            key = try PrivateKey.read(pem: try read(keyFile))
            serverKey = try PrivateKey.read(pem: try read(serverKeyFile))
        } catch {
            throw TLSError("\(directory): \(error)")
        }
        return CertificateAuthority(directory: directory, certificate: certificate, key: key, serverKey: serverKey)
    }

    /// The authority in `directory`, made first when there is none; `created` says which.
    public static func openOrCreate(directory: String, now: Int) throws(TLSError) -> (authority: CertificateAuthority, created: Bool) {
        if exists(directory: directory) { return (try open(directory: directory), false) }
        return (try create(directory: directory, now: now), true)
    }

    /// A server certificate for `names` (host names and addresses) and the server key.
    public func issueServerIdentity(names: [String], now: Int) throws(TLSError) -> TLSIdentity {
        let certificate = try Certificate.issue(.server(names: names, now: now, days: Self.serverDays), key: serverKey,
                                                issuer: (self.certificate, key))
        return try TLSIdentity(chain: [certificate], key: serverKey)
    }

    /// The names a server certificate is issued for by default: `localhost`, the loopback
    /// addresses and this machine's host name, then `extra`, without repeats.
    public static func defaultNames(extra: [String]) -> [String] {
        var names = ["localhost", "127.0.0.1", "::1"]
        if let host = hostName() { names.append(host) }
        names += extra
        var seen = Set<String>()
        return names.filter { !$0.isEmpty && seen.insert($0.lowercased()).inserted }
    }

    /// This machine's host name, when it has one.
    static func hostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }
}
