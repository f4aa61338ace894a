import CGnuTLS
import MishapSupport

/// The names a certificate authority may vouch for: X.509 name constraints (RFC 5280), as
/// permitted subtrees, marked critical. A certificate it signs for any other host name or
/// address is refused by every client that checks them (OpenSSL, GnuTLS, Apple's and Android's
/// TLS stacks), so a trusted local authority whose key leaked cannot vouch for a bank.
///
/// A host name permits itself and every name below it (`localhost` permits `app.localhost`);
/// an address range permits the addresses in it. Only host names and addresses are permitted,
/// so a certificate naming one outside them is refused whatever else it names.
public struct NameConstraints: Sendable, Equatable {
    /// Host names, each with the names below it.
    public var hostNames: [String]
    /// Address ranges, as CIDR text (`127.0.0.0/8`, `::1/128`).
    public var addressRanges: [String]

    public init(hostNames: [String], addressRanges: [String]) {
        self.hostNames = hostNames
        self.addressRanges = addressRanges
    }

    /// Everything, as a person reads it: `localhost, wrong.host.invalid, 127.0.0.0/8, ::1/128`.
    public var description: String { (hostNames + addressRanges).joined(separator: ", ") }

    /// The constraints as GnuTLS builds them, for `body`.
    func withGnuTLS<T>(_ body: (gnutls_x509_name_constraints_t) throws(TLSError) -> T) throws(TLSError) -> T {
        var made: gnutls_x509_name_constraints_t?
        try TLSError.check(gnutls_x509_name_constraints_init(&made), "preparing the name constraints")
        guard let constraints = made else { throw TLSError("preparing the name constraints: no memory") }
        defer { gnutls_x509_name_constraints_deinit(constraints) }
        for name in hostNames {
            try Datum.withDatum(name) { (datum: UnsafePointer<gnutls_datum_t>) throws(TLSError) in
                try TLSError.check(gnutls_x509_name_constraints_add_permitted(constraints, GNUTLS_SAN_DNSNAME, datum),
                                   "permitting the name \(name)")
            }
        }
        for range in addressRanges {
            var datum = gnutls_datum_t()
            try TLSError.check(gnutls_x509_cidr_to_rfc5280(range, &datum), "reading the address range \(range)")
            defer { mishap_gnutls_free(datum.data) }
            try TLSError.check(gnutls_x509_name_constraints_add_permitted(constraints, GNUTLS_SAN_IPADDRESS, &datum),
                               "permitting the addresses \(range)")
        }
        return try body(constraints)
    }

    /// The permitted names of `certificate`'s name constraints; nil when it has none.
    static func read(from certificate: gnutls_x509_crt_t) -> NameConstraints? {
        var made: gnutls_x509_name_constraints_t?
        guard gnutls_x509_name_constraints_init(&made) >= 0, let constraints = made else { return nil }
        defer { gnutls_x509_name_constraints_deinit(constraints) }
        var critical: UInt32 = 0
        guard gnutls_x509_crt_get_name_constraints(certificate, constraints, 0, &critical) >= 0 else { return nil }
        var read = NameConstraints(hostNames: [], addressRanges: [])
        var index: UInt32 = 0
        while true {
            var type: UInt32 = 0
            var name = gnutls_datum_t()
            guard gnutls_x509_name_constraints_get_permitted(constraints, index, &type, &name) >= 0 else { break }
            index += 1
            let bytes = name.data.map { Array(UnsafeBufferPointer(start: $0, count: Int(name.size))) } ?? []
            if type == GNUTLS_SAN_DNSNAME.rawValue {
                read.hostNames.append(String(decoding: bytes, as: UTF8.self))
            } else if type == GNUTLS_SAN_IPADDRESS.rawValue, let range = Self.range(bytes) {
                read.addressRanges.append(range)
            }
        }
        return read.hostNames.isEmpty && read.addressRanges.isEmpty ? nil : read
    }

    /// An address and its mask, as a name constraint holds them, as CIDR text.
    private static func range(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 8 || bytes.count == 32 else { return nil }
        let half = bytes.count / 2
        let address = Array(bytes[..<half])
        let prefix = bytes[half...].reduce(0) { $0 + $1.nonzeroBitCount }
        return IPAddressBytes.text(address).map { "\($0)/\(prefix)" }
    }

    /// Whether `name` (a host name or an address) is within them, as GnuTLS checks a
    /// certificate's names against its issuer's constraints.
    func permits(_ name: String) -> Bool {
        (try? withGnuTLS { (constraints: gnutls_x509_name_constraints_t) throws(TLSError) -> Bool in
            if var address = IPAddressBytes.parse(name) {
                let count = UInt32(address.count)
                return address.withUnsafeMutableBufferPointer { buffer in
                    var datum = gnutls_datum_t(data: buffer.baseAddress, size: count)
                    return gnutls_x509_name_constraints_check(constraints, GNUTLS_SAN_IPADDRESS, &datum) != 0
                }
            }
            return try Datum.withDatum(name) { (datum: UnsafePointer<gnutls_datum_t>) throws(TLSError) -> Bool in
                gnutls_x509_name_constraints_check(constraints, GNUTLS_SAN_DNSNAME, datum) != 0
            }
        }) ?? false
    }
}
