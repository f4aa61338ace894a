/// How the server behind one port of the catalogue behaves.
public enum TLSPersonality: Sendable {
    /// A TLS server presenting `identity`, with GnuTLS priorities (protocol versions and
    /// ciphers; nil: GnuTLS's defaults). Once its handshake succeeds, it serves as usual.
    case tls(TLSIdentity, priorities: String?)
    /// No TLS at all: the server reads the ClientHello, then resets the connection.
    case resetAfterHello
    /// No TLS at all: the server accepts, then never answers.
    case stall
}

/// The certificates and settings of every failure of the catalogue, made from the local
/// authority at each start (they are cheap to make: ECDSA keys).
public enum TLSCatalogue {
    /// The only name of the `wrong-host` failure's certificate: one no client asks for (the
    /// `.invalid` domain never resolves), within the local authority's name constraints so that
    /// the failure is the host name's and nothing else.
    public static let wrongHostName = "wrong.host.invalid"

    /// GnuTLS priorities allowing only TLS 1.0 and 1.1.
    public static let oldProtocolPriorities = "NORMAL:-VERS-ALL:+VERS-TLS1.1:+VERS-TLS1.0:%COMPAT"

    /// Every failure's personality, in catalogue order. `names` are those of the server's
    /// certificate; `now` is the time they are measured from, in seconds since the epoch.
    public static func make(authority: CertificateAuthority, names: [String], now: Int) throws(TLSError) -> [(TLSFailure, TLSPersonality)] {
        let day = 86_400
        let ca = (certificate: authority.certificate, key: authority.key)
        func issued(_ request: CertificateRequest, by issuer: (certificate: Certificate, key: PrivateKey)?) throws(TLSError) -> TLSIdentity {
            let key = try PrivateKey.generate()
            return try TLSIdentity(chain: [try Certificate.issue(request, key: key, issuer: issuer)], key: key)
        }
        var server = CertificateRequest.server(names: names, now: now, days: CertificateAuthority.serverDays)
        var catalogue: [(TLSFailure, TLSPersonality)] = []
        for failure in TLSFailure.allCases {
            let personality: TLSPersonality
            switch failure {
            case .expired:
                server.notBefore = now - 60 * day
                server.notAfter = now - 30 * day
                personality = .tls(try issued(server, by: ca), priorities: nil)
            case .notYetValid:
                server.notBefore = now + 30 * day
                server.notAfter = now + 60 * day
                personality = .tls(try issued(server, by: ca), priorities: nil)
            case .wrongHost:
                personality = .tls(try issued(.server(names: [wrongHostName], now: now, days: 30), by: ca), priorities: nil)
            case .selfSigned:
                personality = .tls(try issued(.server(names: names, now: now, days: 30), by: nil), priorities: nil)
            case .untrustedRoot:
                let rootKey = try PrivateKey.generate()
                let root = try Certificate.issue(CertificateRequest(commonName: "Mishap Untrusted Root", notBefore: now - day, notAfter: now + 30 * day,
                                                                    authority: .init(pathLength: 1)), key: rootKey, issuer: nil)
                personality = .tls(try issued(.server(names: names, now: now, days: 30), by: (root, rootKey)), priorities: nil)
            case .incompleteChain:
                let intermediateKey = try PrivateKey.generate()
                let intermediate = try Certificate.issue(CertificateRequest(commonName: "Mishap Intermediate CA", notBefore: now - day, notAfter: now + 30 * day,
                                                                            authority: .init(pathLength: 0)), key: intermediateKey, issuer: ca)
                // The server's certificate alone: the intermediate that links it to the CA is left out.
                personality = .tls(try issued(.server(names: names, now: now, days: 30), by: (intermediate, intermediateKey)), priorities: nil)
            case .pinMismatch:
                personality = .tls(try issued(.server(names: names, now: now, days: 30), by: ca), priorities: nil)
            case .oldProtocol:
                personality = .tls(try authority.issueServerIdentity(names: names, now: now), priorities: oldProtocolPriorities)
            case .handshakeReset:
                personality = .resetAfterHello
            case .handshakeStall:
                personality = .stall
            }
            catalogue.append((failure, personality))
        }
        return catalogue
    }
}
