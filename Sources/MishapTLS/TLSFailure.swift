/// The TLS failure catalogue: each failure an app can meet before its first HTTP byte, served
/// on a port of its own.
public enum TLSFailure: String, CaseIterable, Sendable {
    case expired
    case notYetValid = "not-yet-valid"
    case wrongHost = "wrong-host"
    case selfSigned = "self-signed"
    case untrustedRoot = "untrusted-root"
    case incompleteChain = "incomplete-chain"
    case pinMismatch = "pin-mismatch"
    case oldProtocol = "old-protocol"
    case handshakeReset = "handshake-reset"
    case handshakeStall = "handshake-stall"

    /// What the server does, in a few words.
    public var summary: String {
        switch self {
        case .expired: "a certificate from the local CA whose validity ended 30 days ago"
        case .notYetValid: "a certificate from the local CA valid from 30 days on"
        case .wrongHost: "a certificate from the local CA for wrong.host.invalid only"
        case .selfSigned: "a self-signed certificate for the usual names"
        case .untrustedRoot: "a certificate issued by a second CA that nobody trusts"
        case .incompleteChain: "a certificate issued by an intermediate CA that is not sent"
        case .pinMismatch: "a valid certificate from the local CA for another key than the documented pin"
        case .oldProtocol: "TLS 1.0 and 1.1 only"
        case .handshakeReset: "a TCP reset after the ClientHello"
        case .handshakeStall: "no answer to the ClientHello, ever"
        }
    }

    /// What a client trusting the local CA reports (OpenSSL 3's words, as curl and Python's
    /// `ssl` print them; checked by Tests/python/test_tls.py).
    public var clientReport: String {
        switch self {
        case .expired: "certificate has expired"
        case .notYetValid: "certificate is not yet valid"
        case .wrongHost: "hostname mismatch (IP address mismatch when the URL names an address)"
        case .selfSigned: "self-signed certificate"
        case .untrustedRoot: "unable to get local issuer certificate"
        case .incompleteChain: "unable to get local issuer certificate"
        case .pinMismatch: "nothing: the handshake succeeds, and an app pinning the server key must refuse it"
        case .oldProtocol: "a failed handshake: the connection ends (Python: EOF occurred in violation of protocol; curl: legacy sigalg disallowed)"
        case .handshakeReset: "connection reset by peer"
        case .handshakeStall: "a timeout"
        }
    }
}
