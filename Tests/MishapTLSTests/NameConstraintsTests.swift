import CGnuTLS
import Foundation
import MishapHTTP
import MishapService
import MishapTestSupport
import MishapTLS
import Testing

/// The local authority vouches for the names Mishap serves only: a certificate its key signs
/// for another name is refused by real verifiers (GnuTLS in process, curl on OpenSSL over a
/// real handshake), while loopback, `localhost`, the names it was made for and the catalogue's
/// `wrong.host.invalid` pass. It lasts about a year, its server certificates 90 days, and an
/// authority made without constraints, or a key others can read, is warned of.
@Suite(.onBlockingThreads, .serialized) struct NameConstraintsTests {
    let now = Int(Date().timeIntervalSince1970)

    /// GnuTLS's verdict on `leaf` trusting only `authority`, for `hostname`: 0 when it
    /// verifies, else GnuTLS's status bits (`GNUTLS_CERT_*`).
    static func gnutlsVerdict(_ leaf: Certificate, _ authority: Certificate, hostname: String) throws -> UInt32 {
        var list: gnutls_x509_trust_list_t?
        #expect(gnutls_x509_trust_list_init(&list, 0) >= 0)
        defer { gnutls_x509_trust_list_deinit(list, 1) }
        var ca = Array(try authority.pem().utf8)
        let caCount = UInt32(ca.count)
        ca.withUnsafeMutableBufferPointer { buffer in
            var datum = gnutls_datum_t(data: buffer.baseAddress, size: caCount)
            #expect(gnutls_x509_trust_list_add_trust_mem(list, &datum, nil, GNUTLS_X509_FMT_PEM, 0, 0) == 1)
        }
        var crt: gnutls_x509_crt_t?
        #expect(gnutls_x509_crt_init(&crt) >= 0)
        defer { gnutls_x509_crt_deinit(crt) }
        var pem = Array(try leaf.pem().utf8)
        let pemCount = UInt32(pem.count)
        pem.withUnsafeMutableBufferPointer { buffer in
            var datum = gnutls_datum_t(data: buffer.baseAddress, size: pemCount)
            #expect(gnutls_x509_crt_import(crt, &datum, GNUTLS_X509_FMT_PEM) >= 0)
        }
        var status: UInt32 = 0
        var name = Array(hostname.utf8) + [0]
        let verified: Int32 = name.withUnsafeMutableBufferPointer { buffer in
            var data = gnutls_typed_vdata_st(type: GNUTLS_DT_DNS_HOSTNAME, data: buffer.baseAddress, size: 0)
            return gnutls_x509_trust_list_verify_crt2(list, &crt, 1, &data, 1, 0, &status, nil)
        }
        #expect(verified >= 0)
        return status
    }

    /// A certificate for `names` signed with the authority's key, as anyone holding it could make.
    static func forged(_ names: [String], by authority: CertificateAuthority, now: Int) throws -> (Certificate, PrivateKey) {
        let key = try PrivateKey.generate()
        return (try Certificate.issue(.server(names: names, now: now, days: 30), key: key, issuer: (authority.certificate, authority.key)), key)
    }

    @Test("A new authority is constrained to loopback, localhost, this machine, the names given and wrong.host.invalid")
    func aNewAuthorityIsConstrained() throws {
        let folder = try TemporaryFolder()
        let authority = try CertificateAuthority.create(directory: folder.path + "/ca", now: now, names: ["mishap.test", "10.0.2.2"])
        let constraints = try #require(authority.certificate.nameConstraints)
        #expect(constraints.hostNames.starts(with: ["localhost"]))
        #expect(constraints.hostNames.contains("mishap.test") && constraints.hostNames.contains("wrong.host.invalid"))
        #expect(constraints.addressRanges == ["127.0.0.0/8", "::1/128", "10.0.2.2/32"])
        for name in ["localhost", "app.localhost", "127.0.0.1", "127.1.2.3", "::1", "mishap.test", "api.mishap.test", "10.0.2.2",
                     "wrong.host.invalid"] {
            #expect(authority.permits(name), "\(name)")
        }
        for name in ["bank.example", "example.com", "localhost.evil.example", "10.0.2.3", "192.168.1.1", "::2", "mishap.test.evil"] {
            #expect(!authority.permits(name), "\(name)")
        }
        // About a year; its server certificates 90 days, never past its own end.
        #expect(authority.certificate.notAfter - now == 400 * 86_400)
        let identity = try authority.issueServerIdentity(names: ["localhost"], now: now)
        #expect(try Certificate.read(pem: identity.certificateChainPEM).notAfter - now == 90 * 86_400)
        let late = now + 380 * 86_400
        let lastOne = try authority.issueServerIdentity(names: ["localhost"], now: late)
        #expect(try Certificate.read(pem: lastOne.certificateChainPEM).notAfter == authority.certificate.notAfter)
        #expect(authority.warnings(now: now).isEmpty)
        #expect(authority.warnings(now: late).first?.contains("ends on") == true)
        do {
            _ = try authority.issueServerIdentity(names: ["localhost"], now: now + 401 * 86_400)
            Issue.record("issued from an authority that has ended")
        } catch {
            #expect(error.description.contains("ended on") && error.description.contains("mishap tls init"), "\(error)")
        }
    }

    @Test("GnuTLS refuses a certificate the authority's key signs for another name, and takes the served names")
    func gnutlsEnforcesTheConstraints() throws {
        let folder = try TemporaryFolder()
        let authority = try CertificateAuthority.create(directory: folder.path + "/ca", now: now)
        for (names, hostname) in [(["localhost", "127.0.0.1"], "localhost"), ([TLSCatalogue.wrongHostName], TLSCatalogue.wrongHostName)] {
            let (leaf, _) = try Self.forged(names, by: authority, now: now)
            #expect(try Self.gnutlsVerdict(leaf, authority.certificate, hostname: hostname) == 0, "\(names)")
        }
        for names in [["bank.example"], ["localhost", "bank.example"], ["10.1.2.3"]] {
            let (leaf, _) = try Self.forged(names, by: authority, now: now)
            let verdict = try Self.gnutlsVerdict(leaf, authority.certificate, hostname: names[0])
            #expect(verdict & GNUTLS_CERT_INVALID.rawValue != 0, "\(names): \(verdict)")
            #expect(verdict & GNUTLS_CERT_SIGNER_CONSTRAINTS_FAILURE.rawValue != 0, "\(names): \(verdict)")
        }
    }

    /// Runs curl on `url` trusting only `ca`, with `extra` arguments: its exit status and standard error.
    static func curl(_ url: String, ca: String, _ extra: [String] = []) throws -> (status: Int32, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl", "-sS", "-o", "/dev/null", "--max-time", "5", "--cacert", ca] + extra + [url]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test("curl (OpenSSL) refuses a forged certificate for another name over a real handshake, and takes localhost and wrong.host.invalid")
    func curlEnforcesTheConstraints() throws {
        let folder = try TemporaryFolder()
        let authority = try CertificateAuthority.create(directory: folder.path + "/ca", now: now)
        let ca = authority.path(CertificateAuthority.certificateFile)
        func serve(_ names: [String]) throws -> MishapInstance {
            let (leaf, key) = try Self.forged(names, by: authority, now: now)
            let tls = TLSOptions(port: 0, identity: try TLSIdentity(chain: [leaf], key: key), replacesPlainHTTP: true)
            return try MishapInstance.start(MishapInstance.Configuration(scenarios: .directory(defaultScenariosDirectory),
                                                                       server: .init(port: 0), tls: tls))
        }
        let served = try serve(["localhost", "127.0.0.1"])
        defer { served.stop() }
        #expect(try Self.curl("https://localhost:\(served.port)/__mishap/health", ca: ca).status == 0)
        let catalogueName = try serve([TLSCatalogue.wrongHostName])
        defer { catalogueName.stop() }
        let port = catalogueName.port
        let resolved = try Self.curl("https://\(TLSCatalogue.wrongHostName):\(port)/__mishap/health", ca: ca,
                                           ["--resolve", "\(TLSCatalogue.wrongHostName):\(port):127.0.0.1"])
        #expect(resolved.status == 0, "\(resolved.error)")

        let bank = try serve(["bank.example", "localhost"])
        defer { bank.stop() }
        for (url, extra) in [("https://bank.example:\(bank.port)/", ["--resolve", "bank.example:\(bank.port):127.0.0.1"]),
                             ("https://localhost:\(bank.port)/", [])] {
            let refused = try Self.curl(url, ca: ca, extra)
            #expect(refused.status == 60 && refused.error.contains("permitted subtree violation"), "\(url): \(refused)")
        }
        let address = try serve(["10.1.2.3"])
        defer { address.stop() }
        let refused = try Self.curl("https://10.1.2.3:\(address.port)/", ca: ca,
                                          ["--connect-to", "10.1.2.3:\(address.port):127.0.0.1:\(address.port)"])
        #expect(refused.status == 60 && refused.error.contains("permitted subtree violation"), "\(refused)")
    }

    @Test("An authority made without constraints, and a key others can read, are warned of with what to do")
    func oldAuthoritiesAndOpenKeysAreWarnedOf() throws {
        let folder = try TemporaryFolder()
        let directory = folder.path + "/old"
        // As an earlier Mishap made it: ten years, no name constraints.
        _ = try CertificateAuthority.create(directory: directory, now: now)
        let key = try PrivateKey.generate()
        let old = try Certificate.issue(CertificateRequest(commonName: "Mishap Local CA", notBefore: now - 3600, notAfter: now + 3650 * 86_400,
                                                           authority: .init(pathLength: 1)), key: key, issuer: nil)
        try old.pem().write(toFile: directory + "/ca.pem", atomically: true, encoding: .utf8)
        try key.pem().write(toFile: directory + "/ca-key.pem", atomically: true, encoding: .utf8)
        #expect(chmod(directory + "/ca-key.pem", 0o644) == 0)
        let authority = try CertificateAuthority.open(directory: directory)
        #expect(authority.certificate.nameConstraints == nil)
        #expect(authority.permits("bank.example"), "an old authority vouches for anything: that is the warning")
        let warnings = authority.warnings(now: now)
        #expect(warnings.count == 2, "\(warnings)")
        #expect(warnings.contains { $0.contains("ca-key.pem can be read by other users (mode 644)") && $0.contains("chmod 600") })
        #expect(warnings.contains { $0.contains("without name constraints") && $0.contains("rm -r '\(directory)' && mishap tls init") })
    }
}
