import Foundation
import MishapService
import MishapTestSupport
import MishapTLS
import Testing

/// HTTPS put together by `MishapInstance` from what `serve` is asked (`TLSSetup`): the local
/// certificate authority made on first use and the HTTPS port serving, or a start error that
/// says why not.
@Suite(.onBlockingThreads) struct TLSSetupTests {
    @Test func anInstanceMakesItsAuthorityAndServesHTTPS() throws {
        let folder = try TemporaryFolder()
        let mishap = try MishapInstance.start(MishapInstance.Configuration(
            scenarios: .directory(defaultScenariosDirectory), server: .init(port: 0),
            tlsSetup: TLSSetup(port: 0, directory: folder.path + "/ca", catalogue: false)))
        defer { mishap.stop() }
        let listing = try #require(mishap.tls)
        #expect(listing.url.hasPrefix("https://127.0.0.1:"), "\(listing.url)")
        #expect(listing.failures.isEmpty)
        #expect(FileManager.default.fileExists(atPath: folder.path + "/ca/" + CertificateAuthority.certificateFile))
        #expect(mishap.configuration.tls != nil)
        // The HTTPS port takes connections, beside plain HTTP.
        let port = try #require(UInt16(listing.url.split(separator: ":").last ?? ""))
        #expect(port != mishap.port)
        let connection = try RawHTTPConnection(port: port)
        connection.close()
    }

    @Test func anUnreadableCertificateIsATLSStartError() throws {
        let folder = try TemporaryFolder()
        let missing = folder.path + "/missing.pem"
        do {
            let mishap = try MishapInstance.start(MishapInstance.Configuration(
                scenarios: .directory(defaultScenariosDirectory), server: .init(port: 0),
                tlsSetup: TLSSetup(port: 0, ownCertificate: (missing, missing))))
            mishap.stop()
            Issue.record("started with an unreadable certificate")
        } catch {
            guard case .tls = error else {
                Issue.record("expected a TLS start error, got \(error)")
                return
            }
            #expect(error.description == "HTTPS: cannot read --tls-cert \(missing)")
        }
    }
}
