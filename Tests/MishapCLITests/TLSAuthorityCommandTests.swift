import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `mishap tls init --name`, `mishap tls trust` and `serve --tls-port` on the authority's name
/// constraints: what it may vouch for is printed, a name asked for later is left out of the
/// certificate with a warning (the certificate still verifies for the others), a key others
/// can read is warned of by both commands, and `tls trust` says how to remove the authority.
@Suite("mishap tls: the authority's names", .onBlockingThreads)
struct TLSAuthorityCommandTests {
    @Test("init --name, trust, then serve with a name the authority was not made for")
    func namesAddedLaterAreLeftOutWithAWarning() async throws {
        let folder = try TemporaryFolder()
        let directory = folder.path + "/tls"
        let made = try await runMishap(["tls", "init", "--dir", directory, "--name", "mishap.test"])
        #expect(made.status == 0, "\(made)")
        #expect(made.standardOutput.contains("it may vouch for localhost, ") && made.standardOutput.contains("mishap.test, wrong.host.invalid, 127.0.0.0/8, ::1/128 only"),
                "\(made.standardOutput)")

        let trust = try await runMishap(["tls", "trust", "--dir", directory])
        #expect(trust.status == 0 && trust.standardError.isEmpty, "\(trust)")
        #expect(trust.standardOutput.contains("names wanted later need a new authority"))
        #expect(trust.standardOutput.range(of: #"security delete-certificate -t -Z [0-9A-F]{40} ~/Library/Keychains/login.keychain-db"#,
                                           options: .regularExpression) != nil, "\(trust.standardOutput)")
        #expect(trust.standardOutput.contains("sudo rm /usr/local/share/ca-certificates/mishap-local-ca.crt && sudo update-ca-certificates --fresh"))
        // docs/https.md computes the same fingerprint with openssl (its macOS removal line).
        let readme = try String(contentsOfFile: Paths.repository + "/docs/https.md", encoding: .utf8)
        let line = try #require(readme.split(separator: "\n").map { $0.drop(while: { $0 == " " }) }.first { $0.hasPrefix("security delete-certificate -t -Z \"$(openssl") })
        let command = try #require(line.range(of: #"\$\(openssl[^)]*\)"#, options: .regularExpression).map { String(line[$0]) })
        let computed = try await run("/bin/bash", ["-c", "printf %s " + command.replacingOccurrences(of: "~/.local/share/mishap/tls", with: directory)],
                                     timeout: .seconds(20))
        #expect(computed.standardOutput.count == 40 && trust.standardOutput.contains("-Z \(computed.standardOutput) "), "\(computed)")

        // A key others can read: both commands say so, with the fix.
        #expect(chmod(directory + "/ca-key.pem", 0o640) == 0)
        let warned = try await runMishap(["tls", "trust", "--dir", directory])
        #expect(warned.status == 0 && warned.standardError.contains("ca-key.pem can be read by other users (mode 640)")
                && warned.standardError.contains("chmod 600"), "\(warned.standardError)")

        let (server, _) = try await ServeTests.startServer([
            "serve", "--port", "0", "--tls-port", "0", "--tls-dir", directory, "--no-tls-catalogue",
            "--tls-name", "mishap.test", "--tls-name", "later.test", "--watch", "off",
        ])
        defer { server.kill() }
        let port = try #require(await UpstreamHTTPSCommandTests.httpsPort(of: server), "stdout: \(server.standardOutput)")
        #expect(server.standardError.contains("ca-key.pem can be read by other users"), "\(server.standardError)")
        #expect(server.standardError.contains("left out of the HTTPS certificate: later.test;"), "\(server.standardError)")
        #expect(server.standardError.contains("rm -r '\(directory)' && mishap tls init"), "\(server.standardError)")
        // The certificate leaves the name out, so it still verifies for the others.
        for host in ["localhost", "127.0.0.1", "mishap.test"] {
            let result = try await run(ServeTests.curl, ["-sS", "-o", "/dev/null", "--max-time", "10", "--cacert", directory + "/ca.pem",
                                                         "--resolve", "mishap.test:\(port):127.0.0.1",
                                                         "https://\(host.contains(":") ? "[\(host)]" : host):\(port)/__mishap/health"],
                                       timeout: .seconds(20))
            #expect(result.status == 0, "\(host): \(result)")
        }
    }

    @Test("serve with a --tls-cert it cannot read says so and exits 1")
    func anUnreadableCertificateStopsServe() async throws {
        let folder = try TemporaryFolder()
        let missing = folder.path + "/missing.pem"
        let result = try await runMishap(["serve", "--port", "0", "--tls-port", "0", "--tls-cert", missing, "--tls-key", missing],
                                         timeout: .seconds(20))
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.contains("mishap: HTTPS: cannot read --tls-cert \(missing)"), "\(result.standardError)")
        #expect(!result.standardOutput.contains("listening"), "\(result.standardOutput)")
    }
}
