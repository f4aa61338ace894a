import Foundation
import MishapHTTP
import MishapTestSupport
import MishapTLS
import Testing

/// The local certificate authority and what it issues, checked with GnuTLS's own reading of
/// the PEM files and, where it is installed, with openssl.
@Suite struct CertificateAuthorityTests {
    let now = Int(Date().timeIntervalSince1970)

    @Test func anAuthorityIsWrittenOnceAndReadBack() throws {
        let folder = try TemporaryFolder()
        let directory = folder.path + "/a/b"
        let made = try CertificateAuthority.create(directory: directory, now: now)
        let read = try CertificateAuthority.open(directory: directory)
        #expect(try read.certificate.pem() == made.certificate.pem())
        #expect(try read.serverKey.spkiPin() == made.serverKey.spkiPin())
        #expect(read.certificate.commonName == "Mishap Local CA")
        #expect(read.certificate.notAfter == now + CertificateAuthority.authorityDays * 86_400)
        #expect(FileSystemModes.mode(directory + "/ca-key.pem") == 0o600)
        #expect(FileSystemModes.mode(directory + "/server-key.pem") == 0o600)
        #expect(FileSystemModes.mode(directory + "/ca.pem") == 0o644)
        #expect(throws: TLSError.self) { try CertificateAuthority.create(directory: directory, now: now) }
        #expect(try CertificateAuthority.openOrCreate(directory: directory, now: now).created == false)
    }

    @Test func aMissingOrBrokenAuthorityIsAClearError() throws {
        let folder = try TemporaryFolder()
        do {
            _ = try CertificateAuthority.open(directory: folder.path)
            Issue.record("opened an empty folder")
        } catch {
            #expect(error.description.contains("mishap tls init"))
        }
        try folder.write("ca.pem", "not a certificate")
        try folder.write("ca-key.pem", "not a key")
        try folder.write("server-key.pem", "not a key")
        do {
            _ = try CertificateAuthority.open(directory: folder.path)
            Issue.record("opened a broken folder")
        } catch {
            #expect(error.description.contains(folder.path))
            #expect(error.description.contains("reading the certificate"))
        }
    }

    @Test func theServerPinIsTheCertificatesPinAndStaysAcrossIssues() throws {
        let folder = try TemporaryFolder()
        let authority = try CertificateAuthority.create(directory: folder.path + "/ca", now: now)
        let first = try authority.issueServerIdentity(names: ["localhost", "127.0.0.1"], now: now)
        let second = try authority.issueServerIdentity(names: ["localhost", "mishap.test"], now: now)
        #expect(first.pin == second.pin)
        #expect(first.certificateChainPEM != second.certificateChainPEM)
        #expect(try Certificate.read(pem: first.certificateChainPEM).spkiPin() == first.pin)
        #expect(first.pin.count == 44)  // Base64 of 32 bytes
    }

    @Test func defaultNamesStartWithLoopbackAndHaveNoRepeats() {
        let names = CertificateAuthority.defaultNames(extra: ["LOCALHOST", "mishap.test", "10.0.2.2", "mishap.test"])
        #expect(Array(names.prefix(3)) == ["localhost", "127.0.0.1", "::1"])
        #expect(names.filter { $0.lowercased() == "localhost" }.count == 1)
        #expect(names.filter { $0 == "mishap.test" }.count == 1)
        #expect(names.contains("10.0.2.2"))
    }

    @Test func theCatalogueHasEveryFailureInOrder() throws {
        let folder = try TemporaryFolder()
        let authority = try CertificateAuthority.create(directory: folder.path + "/ca", now: now)
        let catalogue = try TLSCatalogue.make(authority: authority, names: ["localhost", "127.0.0.1"], now: now)
        #expect(catalogue.map(\.0) == TLSFailure.allCases)
        for (failure, personality) in catalogue {
            switch (failure, personality) {
            case (.handshakeReset, .resetAfterHello), (.handshakeStall, .stall):
                break
            case (.oldProtocol, .tls(_, let priorities)):
                #expect(priorities == TLSCatalogue.oldProtocolPriorities)
            case (.pinMismatch, .tls(let identity, nil)):
                #expect(identity.pin != (try authority.serverKey.spkiPin()))
            case (_, .tls(let identity, nil)):
                #expect(!identity.certificateChainPEM.isEmpty, "\(failure)")
            default:
                Issue.record("\(failure) has an unexpected personality")
            }
        }
    }

    @Test func anOwnCertificateMustBeForItsKey() throws {
        let folder = try TemporaryFolder()
        let authority = try CertificateAuthority.create(directory: folder.path + "/ca", now: now)
        let certificate = try authority.certificate.pem()
        let identity = try TLSIdentity.read(certificatePEM: certificate, keyPEM: try authority.key.pem())
        #expect(identity.pin == (try authority.key.spkiPin()))
        #expect(throws: TLSError.self) {
            try TLSIdentity.read(certificatePEM: certificate, keyPEM: try authority.serverKey.pem())
        }
    }

    @Test func theKeyIsNeverInTheSettingsDescription() throws {
        let key = try PrivateKey.generate()
        let pem = try key.pem()
        let settings = TLSSettings(certificateChainPEM: "chain", privateKeyPEM: pem)
        #expect(!"\(settings)".contains(pem.split(separator: "\n")[1]))
        #expect("\(settings)".contains("private key withheld"))
    }
}

/// File permission bits, read with Foundation.
enum FileSystemModes {
    static func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
    }
}
