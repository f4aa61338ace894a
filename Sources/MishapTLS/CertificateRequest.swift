import MishapSupport

/// What a certificate to be issued says: its subject, the names it is valid for, when, and
/// whether it may issue certificates itself.
public struct CertificateRequest: Sendable {
    /// The subject's common name (`CN`).
    public var commonName: String
    /// Host names it is valid for (subject alternative names of type DNS).
    public var dnsNames: [String]
    /// IP addresses it is valid for, as text (`127.0.0.1`, `::1`).
    public var ipAddresses: [String]
    /// The first second it is valid, in seconds since the epoch.
    public var notBefore: Int
    /// The last second it is valid, in seconds since the epoch.
    public var notAfter: Int
    /// Whether it is a certificate authority (may sign certificates), and how many authorities
    /// may follow it in a chain (nil: no limit).
    public var authority: Authority?

    /// A certificate authority's limits.
    public struct Authority: Sendable {
        /// How many intermediate authorities may follow in a chain; nil for no limit.
        public var pathLength: Int?
        /// The only names the certificates it signs may name; nil for any.
        public var permittedNames: NameConstraints?

        public init(pathLength: Int? = nil, permittedNames: NameConstraints? = nil) {
            self.pathLength = pathLength
            self.permittedNames = permittedNames
        }
    }

    public init(commonName: String, dnsNames: [String] = [], ipAddresses: [String] = [],
                notBefore: Int, notAfter: Int, authority: Authority? = nil) {
        self.commonName = commonName
        self.dnsNames = dnsNames
        self.ipAddresses = ipAddresses
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.authority = authority
    }

    /// A server's certificate for `names` (host names and IP addresses, told apart), valid from
    /// an hour before `now` for `days`.
    public static func server(names: [String], now: Int, days: Int) -> CertificateRequest {
        CertificateRequest(commonName: names.first ?? "localhost",
                           dnsNames: names.filter { IPAddressBytes.parse($0) == nil },
                           ipAddresses: names.filter { IPAddressBytes.parse($0) != nil },
                           notBefore: now - 3600, notAfter: now + days * 86_400)
    }
}
