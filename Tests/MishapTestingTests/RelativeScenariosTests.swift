import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTesting
import MishapTestSupport
import Testing

/// `.directory(_:relativeTo: #filePath)` finds a fixture folder beside the test file whatever the
/// current folder is, and `retries(...).violations` counts too-early retries as the HTTP API does.
@Suite(.onBlockingThreads) struct RelativeScenariosTests {
    @Test func aFolderBesideTheTestFileIsFoundFromAnyCurrentFolder() async throws {
        let scenarios = Mishap.Scenarios.directory("Fixtures/scenarios", relativeTo: #filePath)
        guard case .directory(let path) = scenarios else { Issue.record("not a folder: \(scenarios)"); return }
        #expect(path.hasPrefix("/") && path.hasSuffix("/Tests/MishapTestingTests/Fixtures/scenarios"), "\(path)")
        // The current folder is not the package's: the relative path alone would not be found.
        #expect(!FileManager.default.fileExists(atPath: "Fixtures/scenarios"))
        try await Mishap.withServer(scenarios: scenarios) { mishap async throws in
            let (data, _) = try await URLSession.shared.data(from: mishap.url("/ping"))
            #expect(String(decoding: data, as: UTF8.self) == "pong")
        }
        guard case .directory(let absolute) = Mishap.Scenarios.directory("/srv/scenarios", relativeTo: #filePath) else { return }
        #expect(absolute == "/srv/scenarios")
    }

    @Test func violationsCountRetriesThatCameBackTooEarly() async throws {
        try await Mishap.withServer(scenarios: .directory("Fixtures/scenarios", relativeTo: #filePath)) { mishap async throws in
            let eager = mishap.session(), patient = mishap.session()
            let urlSession = URLSession(configuration: .ephemeral)
            func ping(_ session: MishapSession, busy: String) async throws -> Int {
                var request = URLRequest(url: mishap.url("/ping?busy=\(busy)"))
                session.apply(to: &request)
                let (_, response) = try await urlSession.data(for: request)
                return (response as! HTTPURLResponse).statusCode
            }
            // Back at once after "Retry-After: 30": a violation.
            #expect(try await ping(eager, busy: "long") == 503)
            #expect(try await ping(eager, busy: "long") == 200)
            // Back after the second it asked for: none.
            #expect(try await ping(patient, busy: "1") == 503)
            try await Task.sleep(for: .seconds(1.2))
            #expect(try await ping(patient, busy: "1") == 200)

            #expect(mishap.retries(session: eager).violations == 1)
            #expect(mishap.retries(session: patient).violations == 0)
            #expect(mishap.retries(session: patient).map(\.honoured) == [true])
            #expect(mishap.retries().violations == 1 && mishap.retries().pending == 0)
            let check = try #require(mishap.retries(session: eager).first)
            #expect(check.required == 30 && (check.waited ?? 99) < 30, "seconds: \(check.required), \(String(describing: check.waited))")
            // The same count the HTTP API gives.
            let (data, _) = try await urlSession.data(from: mishap.url("/__mishap/retries"))
            let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            #expect(json?["violations"] as? Int == mishap.retries().violations)
        }
    }
}
