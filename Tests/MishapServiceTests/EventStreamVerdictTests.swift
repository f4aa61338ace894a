import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MishapService
import MishapTestSupport
import Testing

/// The verdict's `reconnect` check, on clients over raw sockets: one that waits the `retry` it
/// was given and sends the last id passes; one that comes straight back without it fails; a
/// stream nobody reconnects to is not judged.
@Suite(.onBlockingThreads) struct EventStreamVerdictTests {
    static let yaml = """
        endpoint: GET /feed
        rules:
          - name: resume
            when: { headers: { Last-Event-ID: "2" } }
            respond:
              events: [ { id: 3, data: three } ]
          - name: fresh
            respond:
              events: [ { id: 1, data: one, retry: 400 }, { id: 2, data: two } ]
              fault: reset
        """

    /// Reads a stream of `/feed` to its end, as `session`, with `headers`.
    static func stream(_ harness: TestServer, session: String, headers: [(String, String)] = []) throws {
        let connection = try harness.connect()
        try connection.sendRequest("GET", "/feed", headers: [("Connection", "close"), ("X-Mishap-Session", session)] + headers)
        _ = try connection.readUntilEnd()
        connection.close()
    }

    /// The `reconnect` check of `session`'s verdict, once the stream before it is known to be over.
    static func check(_ harness: TestServer, session: String) async throws -> VerdictCheck {
        var found: VerdictCheck?
        _ = await eventually(within: .seconds(5)) {
            found = harness.service.verdict(session: session).checks.first { $0.name == "reconnect" }
            return found?.passed != nil
        }
        return try #require(found)
    }

    @Test func aClientThatWaitsAndSendsTheLastIdPasses() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        try Self.stream(harness, session: "good")
        try await Task.sleep(for: .milliseconds(450))
        try Self.stream(harness, session: "good", headers: [("Last-Event-ID", "2")])
        let check = try await Self.check(harness, session: "good")
        #expect(check.passed == true, "\(check.summary)")
        #expect(check.summary == "The client reconnected to 1 stream after the retry it was given, with the last id.")
        #expect(check.evidence.map(\.note) == ["the stream sent last id \"2\" and retry 400 ms", "reconnected as told"])
        let verdict = harness.service.verdict(session: "good")
        #expect(verdict.checks.map(\.name) == VerdictCheck.names && verdict.checks.last?.name == "reconnect")
    }

    @Test func aClientThatComesStraightBackWithoutTheIdFails() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        try Self.stream(harness, session: "hasty")
        try Self.stream(harness, session: "hasty")
        let check = try await Self.check(harness, session: "hasty")
        #expect(check.passed == false)
        #expect(check.summary.hasPrefix("GET /feed (#2) came back after "), "\(check.summary)")
        #expect(check.summary.hasSuffix(", sooner than the retry of 400 ms it was given, and sent no Last-Event-ID, though the stream's last id was \"2\"."),
                "\(check.summary)")
    }

    @Test func aStreamNobodyReconnectsToIsNotJudged() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        try Self.stream(harness, session: "once")
        try await Task.sleep(for: .milliseconds(300))
        let check = try #require(harness.service.verdict(session: "once").checks.first { $0.name == "reconnect" })
        #expect(check.passed == nil && check.summary == "No stream of events ended and was reconnected to.")
    }
}
