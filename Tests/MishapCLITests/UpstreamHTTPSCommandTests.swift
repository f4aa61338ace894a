import Foundation
import MishapTestSupport
import Testing

/// `mishap serve --upstream https://... --upstream-ca CA.pem` in front of a second
/// `mishap serve --tls-port`, whose certificate comes from a CA made by `mishap tls init`: curl
/// through the front gets the HTTPS upstream's answer with the CA, and a 502 saying `tls`
/// without it.
@Suite("mishap serve --upstream https", .onBlockingThreads)
struct UpstreamHTTPSCommandTests {
    static let upstreamYAML = """
        endpoint: GET /things/{id}
        rules:
          - name: thing
            respond: { status: 201, headers: { X-Upstream: secure }, json: { id: "{{path.id}}" } }
        """

    /// The port of the `mishap listening on https://127.0.0.1:PORT (pin ...)` line, once written.
    static func httpsPort(of server: ChildProcess) async -> UInt16? {
        let prefix = "mishap listening on https://127.0.0.1:"
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            for line in server.standardOutput.split(separator: "\n") where line.hasPrefix(prefix) {
                return UInt16(line.dropFirst(prefix.count).prefix { $0.isNumber })
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    @Test("serve --upstream https://127.0.0.1:PORT --upstream-ca trusts mishap's own CA")
    func httpsUpstreamWithMishapsCA() async throws {
        let folder = try TemporaryFolder()
        try folder.write("upstream/things.yaml", Self.upstreamYAML)
        try folder.write("front/local.yaml", "endpoint: GET /local\nrules:\n  - { name: local, respond: { text: local } }\n")
        let tlsDirectory = folder.path + "/tls"
        let initialised = try await runMishap(["tls", "init", "--dir", tlsDirectory])
        #expect(initialised.status == 0, "\(initialised)")

        let (upstream, _) = try await ServeTests.startServer([
            "serve", "--port", "0", "--tls-port", "0", "--tls-dir", tlsDirectory, "--no-tls-catalogue",
            "--scenarios", folder.path + "/upstream", "--watch", "off",
        ])
        defer { upstream.kill() }
        let port = try #require(await Self.httpsPort(of: upstream), "stdout: \(upstream.standardOutput)")
        let url = "https://127.0.0.1:\(port)"

        let (trusting, trustingPort) = try await ServeTests.startServer([
            "serve", "--port", "0", "--scenarios", folder.path + "/front", "--watch", "off",
            "--upstream", url, "--upstream-ca", tlsDirectory + "/ca.pem",
        ])
        defer { trusting.kill() }
        let answer = try await RecordTests.fetch(trustingPort, ("GET", "/things/42", nil))
        #expect(answer.status == 201, "\(answer) stderr: \(trusting.standardError)")
        #expect(answer.headers["x-upstream"] == "secure")
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"id":"42"}"#)
        #expect(try await ServeTests.curl("http://127.0.0.1:\(trustingPort)/local").body == "local")

        // The system's CAs only: the handshake fails, and the front says so.
        let (untrusting, untrustingPort) = try await ServeTests.startServer([
            "serve", "--port", "0", "--scenarios", folder.path + "/front", "--watch", "off", "--upstream", url,
        ])
        defer { untrusting.kill() }
        let refused = try await ServeTests.curl("http://127.0.0.1:\(untrustingPort)/things/42")
        #expect(refused.status == 502, "\(refused)")
        #expect(refused.body.contains("gave no answer (tls)"), "\(refused.body)")
        #expect(await ServeTests.eventually { untrusting.standardError.contains("(tls)") }, "\(untrusting.standardError)")
    }
}
