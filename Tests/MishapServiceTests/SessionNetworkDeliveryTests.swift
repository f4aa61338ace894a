import Foundation
import MishapEngine
@testable import MishapService
import MishapSupport
import MishapTestSupport
import Testing

/// A session's profile carried out on the socket, through the admin API, over real
/// connections: a body at the session's rate while another session gets it at once, the
/// download that dies at 40 %, and an upload answered 413 before its body is sent.
@Suite(.onBlockingThreads) struct SessionNetworkDeliveryTests {
    static let body = String(repeating: "x", count: 40_000)
    static let yaml = """
        endpoints:
          - endpoint: GET /big
            rules:
              - { name: big, respond: { text: "\(body)" } }
          - endpoint: POST /upload
            rules:
              - { name: taken, respond: { status: 201, text: taken } }
        """

    static func put(_ harness: TestServer, _ session: String, _ body: String) async throws {
        let answer = try await harness.send("PUT", "/__mishap/network?session=" + session, body: Data(body.utf8))
        #expect(answer.status == 200, "\(answer.text)")
    }

    static func fetch(_ harness: TestServer, _ session: String) throws -> (seconds: Double, response: ClientResponse) {
        let start = ContinuousClock.now
        let response = try harness.sendRaw("GET", "/big", headers: [("X-Mishap-Session", session)])
        let elapsed = ContinuousClock.now - start
        return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, response)
    }

    @Test func aBodyComesAtTheSessionsRateAndAtOnceToAnother() async throws {
        let harness = try TestServer(yaml: Self.yaml, logger: quietLogger)
        try await Self.put(harness, "slow", #"{"bandwidth": {"down": "20kB/s"}}"#)
        async let slow = Task.detached { try Self.fetch(harness, "slow") }.value
        async let fast = Task.detached { try Self.fetch(harness, "fast") }.value
        let (shaped, unshaped) = try await (slow, fast)
        #expect(shaped.response.status == 200 && shaped.response.body.count == 40_000)
        #expect(shaped.seconds >= 1.5 && shaped.seconds < 15, "40 kB at 20 kB/s: about 2 s, took \(shaped.seconds)")
        #expect(unshaped.response.body.count == 40_000 && unshaped.seconds + 1 < shaped.seconds, "another session at once: \(unshaped.seconds)")
        let entry = try #require(try await harness.journal("session=slow").last)
        #expect((entry["network"] as? [String: Any])?["downBytesPerSecond"] as? Int == 20_000)
    }

    @Test func theDownloadDiesAtFortyPercent() async throws {
        let harness = try TestServer(yaml: Self.yaml, logger: quietLogger)
        try await Self.put(harness, "dies", #"{"resetAfterBytes": "40%"}"#)
        let connection = try harness.connect()
        try connection.sendRequest("GET", "/big", headers: [("X-Mishap-Session", "dies")])
        let (bytes, _) = try connection.readUntilEnd()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200") && text.contains("Content-Length: 40000"), "\(text.prefix(200))")
        let bodyBytes = text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n").utf8.count
        #expect(bodyBytes <= 16_000, "cut at 40 % of 40,000 bytes: \(bodyBytes)")
        let entry = try #require(try await harness.journal("session=dies").last)
        #expect((entry["network"] as? [String: Any])?["resetAfterFraction"] as? Double == 0.4)
    }

    @Test func anUploadIsAnswered413BeforeItsBody() async throws {
        let harness = try TestServer(yaml: Self.yaml, logger: quietLogger)
        try await Self.put(harness, "refused", #"{"upload": {"answerEarly": 413}}"#)
        let connection = try harness.connect()
        try connection.send("POST /upload HTTP/1.1\r\nHost: x\r\nX-Mishap-Session: refused\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 413, "instead of 100 Continue: \(response.text)")
        #expect(response.text.contains("answered before the request body was read"))
        let entry = try #require(try await harness.journal("session=refused").last)
        #expect(entry["status"] as? Int == 413 && entry["path"] as? String == "/upload")
        let other = try harness.sendRaw("POST", "/upload", body: Array("small".utf8))
        #expect(other.status == 201, "other sessions upload as they come")
    }
}
