import Foundation
import MishapTestSupport
import Testing

/// `serve`'s `--admin-host` and `--admin-origin` as a running server uses them, what it refuses
/// of them, and an `--upstream` that is the server itself, refused before it starts.
@Suite(.onBlockingThreads) struct AdminAccessCommandTests {
    @Test func allowedNamesAndOriginsAreUsed() async throws {
        let folder = try TemporaryFolder()
        try folder.write("s/hello.yaml", "endpoint: GET /hello\nrules: [{ name: hello, respond: { text: hi } }]\n")
        let (server, port) = try await ServeTests.startServer([
            "serve", "--port", "0", "--scenarios", folder.path + "/s", "--watch", "off",
            "--admin-host", "mishap.test", "--admin-host", "other.test", "--admin-origin", "http://app.test:3000",
        ])
        defer { server.kill() }
        for (host, status) in [("mishap.test:\(port)", 200), ("other.test", 200), ("rebound.test:\(port)", 403), ("localhost", 200)] {
            let connection = try RawHTTPConnection(port: port, timeoutSeconds: 10)
            try connection.send("GET /__mishap/health HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
            #expect(try connection.readResponse().status == status, "\(host)")
        }
        let allowed = DaemonTests.fetch(port, "/__mishap/reset", method: "POST", headers: ["Origin: http://app.test:3000"])
        #expect(allowed?.status == 200)
        let refused = DaemonTests.fetch(port, "/__mishap/reset", method: "POST", headers: ["Origin: http://evil.test"])
        #expect(refused?.status == 403)
        #expect(refused?.body.contains("--admin-origin http://evil.test") == true, "\(String(describing: refused?.body))")
    }

    @Test(arguments: [
        (["--admin-host", "mishap.test:8080"], "--admin-host takes a host name"),
        (["--admin-origin", "http://app.test:3000/"], "--admin-origin takes an origin"),
        (["--port", "8123", "--upstream", "http://localhost:8123/api"], "is this Mishap itself"),
        (["--port", "0", "--tls-port", "8443", "--upstream", "https://127.0.0.1:8443"], "is this Mishap itself"),
    ])
    func badValuesAreRefused(arguments: [String], message: String) async throws {
        let result = try await runMishap(["serve", "--scenarios", Paths.scenarios] + arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.standardError.contains(message), "\(result.standardError)")
    }
}
