import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import MishapService
import MishapTesting

let options = MishapOptions(
    seed: 42,                                                        // chance, delays and random values repeat
    cors: CORSPolicy(origins: .listed(["http://localhost:3000"])),   // pages of this origin may call it
    upstream: UpstreamOptions(url: "http://127.0.0.1:9000")          // what no rule answers goes there
)

/// The Swift blocks of docs/swift.md and docs/testing.md that are not whole tests, compiled here
/// word for word (`DocumentationBlockTests` checks they are), and run where they can: the
/// options above, the UI test's setup against a stand-in for XCUIApplication (XCTest's UI
/// testing exists on Apple platforms only), and the app's choice of base URL.
@Suite("Documentation: Swift examples", .onBlockingThreads)
struct DocumentationSwiftExamples {
    /// Stands in for XCTest's `XCUIApplication`, which Linux does not have: what the example uses of it.
    final class XCUIApplication {
        var launchEnvironment: [String: String] = [:]
        private(set) var launched = false
        func launch() { launched = true }
    }

    /// docs/testing.md's UI test, as written; returns the app it launched.
    static func uiTest() -> XCUIApplication {
        let session = "ui-\(UUID().uuidString)"
        let app = XCUIApplication()
        app.launchEnvironment["API_BASE_URL"] = "http://127.0.0.1:8080/__session/\(session)"
        // POST /__mishap/force?endpoint=POST%20/login&rule=maintenance&times=2&session=\(session)
        app.launch()
        // ... tap through the login ...
        // GET /__mishap/requests/count?session=\(session)&path=/login  -> 3
        return app
    }

    /// docs/testing.md's app side, as written.
    static func appBaseURL() -> URL {
        let base = ProcessInfo.processInfo.environment["API_BASE_URL"].flatMap(URL.init(string:))
            ?? URL(string: "https://api.example.com")!
        return base
    }

    @Test func theUITestGivesTheAppItsSessionInTheBaseURL() {
        let app = Self.uiTest()
        #expect(app.launched)
        let base = app.launchEnvironment["API_BASE_URL"] ?? ""
        #expect(base.hasPrefix("http://127.0.0.1:8080/__session/ui-") && URL(string: base) != nil, "\(base)")
        #expect(Self.appBaseURL() == URL(string: ProcessInfo.processInfo.environment["API_BASE_URL"] ?? "https://api.example.com"))
    }

    @Test func theOptionsServeCORSAndSendTheRestUpstream() async throws {
        let scenarios = "endpoint: GET /hello\nrules:\n  - { name: hello, respond: { text: hi } }\n"
        try await Mishap.withServer(scenarios: .yaml(scenarios), options: options) { mishap in
            var preflight = URLRequest(url: mishap.url("/hello"))
            preflight.httpMethod = "OPTIONS"
            preflight.setValue("http://localhost:3000", forHTTPHeaderField: "Origin")
            preflight.setValue("GET", forHTTPHeaderField: "Access-Control-Request-Method")
            let (_, allowed) = try await URLSession.shared.data(for: preflight)
            let http = try #require(allowed as? HTTPURLResponse)
            #expect(http.statusCode == 204 && http.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == "http://localhost:3000")

            // No rule answers /elsewhere: it goes to the upstream, whatever answers there.
            _ = try await URLSession.shared.data(from: mishap.url("/elsewhere"))
            let (journal, _) = try await URLSession.shared.data(from: mishap.url("/__mishap/requests?path=/elsewhere"))
            #expect(String(decoding: journal, as: UTF8.self).contains(#""upstream":"http://127.0.0.1:9000""#))
        }
    }
}
