import MishapSupport

/// Mishap's local certificate authority: a folder with the authority's certificate (`ca.pem`,
/// the file users trust), its key (`ca-key.pem`) and the server's key (`server-key.pem`), both
/// written with mode 0600. `mishap tls init` makes it once; every `serve --tls-port` then
/// issues a fresh server certificate from it for the names asked, always for the same server
/// key, so an app's SPKI pin stays valid across restarts.
///
/// The authority may vouch for the names it was made for only (`NameConstraints`): the
/// loopback addresses, `localhost`, this machine's name, the names given when it was made, and
/// the TLS failure catalogue's own (`wrong.host.invalid`). It lasts `authorityDays`; names
/// wanted later, or a new year, need a new authority (trusted anew).
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

    /// How long the authority is valid: about a year and a month, so a year of use and a month
    /// to make and trust the next; a trusted key that leaks is good for that long at most.
    public static let authorityDays = 400
    /// How long a server certificate is valid (and never beyond the authority): 90 days. It
    /// is issued anew at every start of `serve`, so only a server running longer sees it end.
    public static let serverDays = 90
    /// How long before its end the authority's coming expiry is warned of.
    public static let expiryWarningDays = 30
    /// The address ranges every authority may vouch for: the loopback ones.
    public static let loopbackRanges = ["127.0.0.0/8", "::1/128"]

    /// The default folder: `$MISHAP_TLS_DIR`, else `$XDG_DATA_HOME/mishap/tls`, else
    /// `~/.local/share/mishap/tls`.
    public static func defaultDirectory(environment: (String) -> String? = Self.variable) -> String {
        if let folder = environment("MISHAP_TLS_DIR"), !folder.isEmpty { return folder }
        if let data = environment("XDG_DATA_HOME"), !data.isEmpty { return data + "/mishap/tls" }
        return (environment("HOME") ?? ".") + "/.local/share/mishap/tls"
    }

    /// An environment variable of this process.
    public static func variable(_ name: String) -> String? {
        Platform.environment(name)
    }

    /// The path of a file in the folder.
    public func path(_ file: String) -> String { directory + "/" + file }

    /// Whether the folder holds an authority (its certificate file exists).
    public static func exists(directory: String) -> Bool {
        FileSystem.readText(directory + "/" + certificateFile) != nil
    }

    /// Makes a new authority in `directory` (created, mode 0700, if missing), permitted to vouch
    /// for `permittedNames(extra: names)`. Refuses when the folder already holds one: replacing
    /// it would break every device that trusts it.
    public static func create(directory: String, now: Int, names: [String] = [],
                              name: String = "Mishap Local CA") throws(TLSError) -> CertificateAuthority {
        if exists(directory: directory) {
            throw TLSError("\(directory) already holds a certificate authority (\(certificateFile)); remove the folder to make a new one")
        }
        if let problem = FileSystem.makeFolders(directory, mode: 0o700) { throw TLSError(problem) }
        let key = try PrivateKey.generate()
        let request = CertificateRequest(commonName: name, notBefore: now - 3600, notAfter: now + authorityDays * 86_400,
                                         authority: CertificateRequest.Authority(pathLength: 1, permittedNames: permittedNames(extra: names)))
        let certificate = try Certificate.issue(request, key: key, issuer: nil)
        let serverKey = try PrivateKey.generate()
        // Keys first: a folder left without its certificate is not taken for a finished one.
        for (file, text, mode) in [(keyFile, try key.pem(), FileMode(0o600)), (serverKeyFile, try serverKey.pem(), FileMode(0o600)),
                                   (certificateFile, try certificate.pem(), FileMode(0o644))] {
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

    /// The authority in `directory`, made first when there is none (for `names` besides the
    /// defaults); `created` says which.
    public static func openOrCreate(directory: String, now: Int, names: [String] = []) throws(TLSError) -> (authority: CertificateAuthority, created: Bool) {
        if exists(directory: directory) { return (try open(directory: directory), false) }
        return (try create(directory: directory, now: now, names: names), true)
    }

    /// The names an authority made now may vouch for: `localhost`, this machine's name and the
    /// loopback ranges, each of `extra` (an address as itself alone), and the TLS failure
    /// catalogue's `wrong.host.invalid`, without repeats.
    public static func permittedNames(extra: [String]) -> NameConstraints {
        var hostNames: [String] = [], ranges = loopbackRanges
        for name in defaultNames(extra: extra) + [TLSCatalogue.wrongHostName] {
            if let address = IPAddressBytes.parse(name) {
                let range = "\(IPAddressBytes.text(address) ?? name)/\(address.count * 8)"
                if !NameConstraints(hostNames: [], addressRanges: ranges).permits(name) { ranges.append(range) }
            } else {
                // A wildcard's constraint is the name under it (`*.a.test` is within `a.test`).
                let host = (name.hasPrefix("*.") ? String(name.dropFirst(2)) : name).lowercased()
                if !hostNames.contains(host) { hostNames.append(host) }
            }
        }
        return NameConstraints(hostNames: hostNames, addressRanges: ranges)
    }

    /// Whether the authority may vouch for `name` (a host name or an address): within its name
    /// constraints, or any name for an authority made without them (by Mishap before it set them).
    public func permits(_ name: String) -> Bool {
        certificate.nameConstraints?.permits(name) ?? true
    }

    /// A server certificate for `names` (host names and addresses) and the server key, valid
    /// for `serverDays` and never past the authority's end. Refused when the authority has
    /// ended: every client would refuse what it signs.
    public func issueServerIdentity(names: [String], now: Int) throws(TLSError) -> TLSIdentity {
        if certificate.notAfter <= now {
            throw TLSError("the local certificate authority in \(directory) ended on \(Self.day(certificate.notAfter)): "
                + "clients refuse what it signs; make a new one (\(Self.renewal(directory))) and trust its ca.pem")
        }
        var request = CertificateRequest.server(names: names, now: now, days: Self.serverDays)
        request.notAfter = min(request.notAfter, certificate.notAfter)
        let certificate = try Certificate.issue(request, key: serverKey, issuer: (self.certificate, key))
        return try TLSIdentity(chain: [certificate], key: serverKey)
    }

    /// What is wrong with the authority, or soon will be, in words, each saying what to do: a
    /// key file others may read, no name constraints (made by an earlier Mishap), an end near.
    public func warnings(now: Int) -> [String] {
        var warnings: [String] = []
        for file in [Self.keyFile, Self.serverKeyFile] {
            if let mode = FileSystem.permissions(path(file)), mode & 0o077 != 0 {
                warnings.append("\(path(file)) can be read by other users (mode \(String(mode, radix: 8))): anyone who reads "
                    + "\(file == Self.keyFile ? "the authority's key can make certificates your devices trust" : "the server's key can pose as this server"); "
                    + "run: chmod 600 '\(path(file))'")
            }
        }
        if certificate.nameConstraints == nil {
            warnings.append("the local certificate authority in \(directory) was made by an earlier Mishap, without name constraints "
                + "and for 10 years: wherever it is trusted, its key can vouch for any site; make a new one, limited to the names "
                + "Mishap serves (\(Self.renewal(directory))), trust its ca.pem, and remove the old one from every trust store "
                + "('mishap tls trust' says how)")
        }
        let left = certificate.notAfter - now
        if left > 0 && left < Self.expiryWarningDays * 86_400 {
            warnings.append("the local certificate authority in \(directory) ends on \(Self.day(certificate.notAfter)): "
                + "make a new one before (\(Self.renewal(directory))) and trust its ca.pem")
        }
        return warnings
    }

    /// The commands that replace the authority in `directory`.
    public static func renewal(_ directory: String) -> String {
        "rm -r '\(directory)' && mishap tls init --dir '\(directory)', with --name for each extra name"
    }

    /// A day, `2027-01-01`, of seconds since the epoch.
    public static func day(_ seconds: Int) -> String {
        String(WallClock.iso8601(milliseconds: Int64(seconds) * 1000).prefix(10))
    }

    /// The names a server certificate is issued for by default: `localhost`, the loopback
    /// addresses and this machine's host name, then `extra`, without repeats.
    public static func defaultNames(extra: [String]) -> [String] {
        var names = ["localhost", "127.0.0.1", "::1"]
        if let host = Platform.hostName() { names.append(host) }
        names += extra
        var seen = Set<String>()
        return names.filter { !$0.isEmpty && seen.insert($0.lowercased()).inserted }
    }
}
