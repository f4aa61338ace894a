import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTesting
import MishapTestSupport
import Testing

/// Resumable downloads from MishapTesting, with URLSession: a session's runtime rule cuts its
/// first download, the resume with `Range` and `If-Range` gets the rest, other sessions are
/// untouched, and `mishap.requests` shows the ranges asked and sent.
@Suite(.onBlockingThreads) struct RangeDownloadFromSwiftTests {
    /// The bytes, kept as an array: a `Data` held in a static constant keeps its storage's
    /// reference in a form LeakSanitizer does not follow, and was reported as leaked.
    static let bytes: [UInt8] = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
    static var body: Data { Data(bytes) }

    static let yaml = """
        endpoint: GET /report.bin
        rules:
          - name: whole
            respond: { base64: "\(body.base64EncodedString())", ranges: true }
        """

    static func uncached(_ session: MishapSession) -> URLSession {
        let configuration = session.configuration
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }

    @Test func aSessionsDownloadDiesAndResumes() async throws {
        try await Mishap.withServer(scenarios: .yaml(Self.yaml)) { mishap in
            let session = mishap.session()
            _ = try session.addRules(yaml: """
                endpoint: GET /report.bin
                rules:
                  - name: dies
                    when: { headers: { Range: { absent: true } } }
                    respond: { base64: "\(Self.body.base64EncodedString())", ranges: { resetAfterBytes: 20000 } }
                """)
            let urlSession = Self.uncached(session)
            let url = mishap.url("/report.bin")
            do {
                _ = try await urlSession.data(from: url)
                Issue.record("the first download did not die")
            } catch let error as URLError {
                #expect(error.code == .networkConnectionLost, "\(error)")
            }
            let cut = try #require(mishap.requests(session: session).last?.range)
            #expect(cut.cutAfterBytes == 20_000 && cut.status == 200 && cut.asked == nil)

            // The client kept the first 20,000 bytes; it asks for the rest.
            var request = URLRequest(url: url)
            request.setValue("bytes=20000-", forHTTPHeaderField: "Range")
            request.setValue(cut.etag, forHTTPHeaderField: "If-Range")
            let (rest, response) = try await urlSession.data(for: request)
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.statusCode == 206)
            #expect(http.value(forHTTPHeaderField: "Content-Range") == "bytes 20000-49999/50000")
            #expect(Self.body.prefix(20_000) + rest == Self.body)
            let resumed = try #require(mishap.requests(session: session).last?.range)
            #expect(resumed.asked == "bytes=20000-" && resumed.ifRange == cut.etag && resumed.status == 206)

            // Another session downloads the whole file at once.
            let (whole, _) = try await Self.uncached(mishap.session()).data(from: url)
            #expect(whole == Self.body)
        }
    }
}
