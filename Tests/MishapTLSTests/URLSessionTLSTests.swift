import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapService
import MishapTestSupport
import MishapTLS
import Testing

/// HTTPS and the TLS failure catalogue, served by a Mishap started in this process, seen by
/// URLSession (on Linux, FoundationNetworking over libcurl and OpenSSL): the error codes an app
/// gets, which the README's table lists. Apple's URLSession may name some differently.
@Suite(.onBlockingThreads, .serialized) struct URLSessionTLSTests {
    /// A Mishap serving HTTPS and the catalogue from a new authority.
    static func start(folder: TemporaryFolder) throws -> MishapInstance {
        let now = Int(Date().timeIntervalSince1970)
        let authority = try CertificateAuthority.create(directory: folder.path + "/ca", now: now)
        let names = ["localhost", "127.0.0.1"]
        let tls = TLSOptions(port: 0, identity: try authority.issueServerIdentity(names: names, now: now),
                             caCertificatePath: authority.path(CertificateAuthority.certificateFile),
                             catalogue: try TLSCatalogue.make(authority: authority, names: names, now: now))
        return try MishapInstance.start(MishapInstance.Configuration(
            scenarios: .directory(defaultScenariosDirectory), server: .init(port: 0), tls: tls))
    }

    /// The URLError code URLSession gives for a GET of `url` and its description, or nil when
    /// it is answered.
    static func failure(_ url: String, timeout: TimeInterval = 3) async -> (code: Int, text: String)? {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        let session = URLSession(configuration: configuration)
        do {
            _ = try await session.clientResponse("GET", URL(string: url + "/isUserNameAvailable?userName=someone")!)
            return nil
        } catch let error as URLError {
            return (error.code.rawValue, error.localizedDescription)
        } catch {
            return (0, "\(error)")
        }
    }

    /// FoundationNetworking cannot be told to trust another authority than the system's (its
    /// CA option is Android's only), so every certificate here is from an unknown issuer first
    /// (OpenSSL reports that before an expiry), the HTTPS port's too, and TLS 1.0 gets as far
    /// as the certificate. The code is NSURLErrorUnknown (-1), with curl's message as the
    /// description, but for the stall (timedOut, -1001). Apple's URLSession names them
    /// differently (serverCertificateUntrusted, -1202, and its kin).
    @Test func eachFailureReachesURLSessionWithCurlsReason() async throws {
        let folder = try TemporaryFolder()
        let mishap = try Self.start(folder: folder)
        defer { mishap.stop() }
        let listing = try #require(mishap.tls)
        let expected: [TLSFailure: (Int, String)] = [
            .expired: (-1, "unable to get local issuer certificate"),
            .notYetValid: (-1, "unable to get local issuer certificate"),
            .wrongHost: (-1, "unable to get local issuer certificate"),
            .selfSigned: (-1, "self-signed certificate"),
            .untrustedRoot: (-1, "unable to get local issuer certificate"),
            .incompleteChain: (-1, "unable to get local issuer certificate"),
            .pinMismatch: (-1, "unable to get local issuer certificate"),
            .oldProtocol: (-1, "unable to get local issuer certificate"),
            .handshakeReset: (-1, "reset by peer"),
            .handshakeStall: (-1001, "-1001"),
        ]
        for entry in listing.failures {
            let seen = await Self.failure(entry.url, timeout: entry.failure == .handshakeStall ? 1 : 5)
            let (code, words) = try #require(expected[entry.failure])
            #expect(seen?.code == code, "\(entry.failure.rawValue): \(seen.map { "\($0)" } ?? "answered")")
            #expect(seen?.text.contains(words) == true, "\(entry.failure.rawValue): \(seen?.text ?? "answered")")
        }
        let https = await Self.failure(listing.url)
        #expect(https?.text.contains("unable to get local issuer certificate") == true, "\(https.map { "\($0)" } ?? "answered")")
    }
}
