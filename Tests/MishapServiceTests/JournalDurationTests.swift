import Foundation
import Logging
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// Each journal entry notes how long its request took (`durationMs`) and whether it ended early
/// (`closedEarly`), once the server is done with it: with the request log on (the detailed
/// path) and off (a tag in libmicrohttpd's context pointer), over real sockets.
@Suite(.onBlockingThreads) struct JournalDurationTests {
    static let yaml = """
        endpoint: GET /hello
        rules:
          - name: slow
            when: { query: { name: slow } }
            respond: { delay: 300, text: late }
          - name: hung
            when: { query: { name: hung } }
            respond: { hang: true }
          - name: hello
            respond: { text: hi }
        """

    /// A logger that writes nothing but lets info through, so the service follows every request.
    static let infoLogger: Logger = {
        var logger = Logger(label: "mishap") { _ in SilentInfoHandler() }
        logger.logLevel = .info
        return logger
    }()

    struct SilentInfoHandler: LogHandler {
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {}
    }

    /// The journal entry for `name`, once its duration is noted (the server notes it just
    /// after the client has its answer, so a moment may pass).
    static func completedEntry(_ harness: TestServer, _ name: String) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let entries = try await harness.journal()
            if let entry = entries.first(where: { ($0["query"] as? [[String]])?.first?.last == name }),
               !(entry["durationMs"] is NSNull), entry["durationMs"] != nil {
                return entry
            }
            guard ContinuousClock.now < deadline else {
                Issue.record("no duration noted for \(name): \(entries)")
                return [:]
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test(arguments: [false, true])
    func durationsAndEarlyEnds(logged: Bool) async throws {
        let harness = logged ? try TestServer(yaml: Self.yaml, logger: Self.infoLogger) : try TestServer(yaml: Self.yaml)
        #expect(harness.service.followsEveryRequest == logged)

        #expect(try await harness.get("/hello?name=quick").text == "hi")
        let quick = try await Self.completedEntry(harness, "quick")
        let quickMs = try #require(quick["durationMs"] as? Double)
        #expect(quickMs >= 0 && quickMs < 1000)
        #expect(quick["closedEarly"] as? Bool == false)

        #expect(try await harness.get("/hello?name=slow").text == "late")
        let slow = try await Self.completedEntry(harness, "slow")
        #expect(try #require(slow["durationMs"] as? Double) >= 300)
        #expect(slow["delayMs"] as? Int == 300)

        // A hang the client gives up on: its entry is there at once, without a duration, and
        // gets one, marked early, when the client leaves.
        let connection = try RawHTTPConnection(port: harness.port, timeoutSeconds: 5)
        try connection.sendRequest("GET", "/hello?name=hung", headers: [("Host", "localhost")])
        // Journaled once the server has read it, which a loaded machine may take a moment to do.
        var hungWhile = try await harness.journal("rule=hung")
        let deadline = ContinuousClock.now + .seconds(10)
        while hungWhile.isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            hungWhile = try await harness.journal("rule=hung")
        }
        #expect(hungWhile.count == 1)
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await harness.journal("rule=hung").first?["durationMs"] is NSNull)
        connection.close()
        let hung = try await Self.completedEntry(harness, "hung")
        #expect(try #require(hung["durationMs"] as? Double) >= 200)
        #expect(hung["closedEarly"] as? Bool == true)
    }
}
