import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MishapHTTP
import MishapService
import MishapTestSupport
import Testing

/// `HTTPServer.stop(grace:)` with the service answering: requests in flight may finish, new
/// connections are refused, the grace period is a bound, and hanging requests do not hold it.
@Suite(.onBlockingThreads) struct GracefulStopTests {
    static let yaml = """
        endpoints:
          - endpoint: GET /slow
            rules:
              - name: slow
                respond: { delay: 5000, text: slow-body-complete }
          - endpoint: GET /long
            rules:
              - name: long
                respond: { delay: 10000, text: long }
          - endpoint: GET /hang
            rules:
              - name: hang
                respond: { hang: true }
        """

    /// Sends `GET path` on a raw connection on its own thread and waits until the service has
    /// answered it (journaled: the response is being held); the connection.
    func holdRequest(_ harness: TestServer, _ path: String) async throws -> RawHTTPConnection {
        let port = harness.port
        let connection = try await onOwnThread { () -> SendableBox<RawHTTPConnection> in
            let connection = try RawHTTPConnection(port: port, timeoutSeconds: 10)
            try connection.sendRequest("GET", path)
            return SendableBox(connection)
        }.value
        #expect(await eventually { harness.service.journal.entries(matching: .init(path: path)).entries.count == 1 })
        #expect(harness.server.requestsInFlight == 1)
        return connection
    }

    /// With a 5 s delayed request in flight (long, so that a loaded machine's stalls cannot
    /// reorder what is checked), `stop(grace: 10 s)` waits for it: the client
    /// gets the whole 200, stop returns after the delay is over and reports nothing cut. While
    /// stop waits, new connections are refused.
    @Test func inFlightRequestFinishes() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let server = harness.server, port = harness.port
        let sent = ContinuousClock.now
        let connection = SendableBox(try await holdRequest(harness, "/slow"))
        async let response = onOwnThread { (try connection.value.readResponse(), ContinuousClock.now) }
        async let stopped = onOwnThread { () -> (cut: Int, at: ContinuousClock.Instant) in
            (server.stop(grace: .seconds(10)), .now)
        }

        // Stop has begun once the server forgets its port; new connections are refused right
        // after. Probed on a thread of its own, so a busy cooperative pool cannot delay it.
        let probe = try await onOwnThread { () -> (began: Bool, refusal: Int32?, at: ContinuousClock.Instant) in
            let deadline = ContinuousClock.now + .seconds(2)
            while server.port != nil && ContinuousClock.now < deadline { usleep(2_000) }
            let began = server.port == nil
            let until = ContinuousClock.now + .milliseconds(500)
            while ContinuousClock.now < until {
                do {
                    _ = try RawHTTPConnection(port: port, timeoutSeconds: 1)
                    usleep(5_000)
                } catch let failure as RawHTTPConnection.Failure {
                    return (began, failure.errno, .now)
                }
            }
            return (began, nil, .now)
        }
        let refusedAt = probe.at
        #expect(probe.began)
        #expect(probe.refusal != nil)
        #expect(probe.refusal == ECONNREFUSED)

        let (answer, answeredAt) = try await response
        let (cut, stoppedAt) = try await stopped
        #expect(answer.status == 200)
        #expect(answer.text == "slow-body-complete")
        #expect(cut == 0)
        #expect(sent.duration(to: stoppedAt) >= .milliseconds(4980), "stop returned \(sent.duration(to: stoppedAt)) after the request")
        #expect(refusedAt < answeredAt, "the refusal came during the grace period, before the answer")
        #expect(server.requestsInFlight == 0)
    }

    /// Holds `GET path`, then stops the server with `grace` while the client reads to the end
    /// of the stream: how many requests were cut short, how long the stop took, and what the
    /// client received.
    func stop(_ harness: TestServer, holding path: String, grace: Duration) async throws
        -> (cut: Int, elapsed: Duration, received: [UInt8]) {
        let server = harness.server
        let connection = SendableBox(try await holdRequest(harness, path))
        async let received = onOwnThread { try connection.value.readUntilEnd().bytes }
        let (cut, elapsed) = try await onOwnThread { () -> (Int, Duration) in
            let start = ContinuousClock.now
            let cut = server.stop(grace: grace)
            return (cut, start.duration(to: .now))
        }
        return (cut, elapsed, try await received)
    }

    /// A grace period shorter than the delay bounds the stop: with a 10 s delay in flight,
    /// `stop(grace: 200 ms)` returns well under 2 s and counts 1 request cut short; the client
    /// should not get the delayed answer (it sometimes does: a known issue).
    @Test func graceBoundsTheWait() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let (cut, elapsed, bytes) = try await stop(harness, holding: "/long", grace: .milliseconds(200))
        #expect(cut == 1)
        #expect(elapsed >= .milliseconds(200))
        #expect(elapsed < .seconds(2), "stop took \(elapsed)")
        // Cut means cut: the delayed answer is not sent early as the daemon stops.
        #expect(!String(decoding: bytes, as: UTF8.self).hasSuffix("long"), "got \(bytes.count) bytes")
    }

    /// A hanging request is let go at once: with only a hang in flight, `stop(grace: 5 s)`
    /// returns quickly, nothing counted as cut, and the client sees the connection close
    /// without an answer.
    @Test func hangDoesNotHoldTheStop() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let (cut, elapsed, bytes) = try await stop(harness, holding: "/hang", grace: .seconds(5))
        #expect(cut == 0)
        // Well under the 5 s grace; a loaded machine may take most of a second to stop the threads.
        #expect(elapsed < .milliseconds(2500), "stop took \(elapsed)")
        #expect(bytes == [])
    }
}
