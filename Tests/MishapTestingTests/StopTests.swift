import MishapTesting
import MishapTestSupport
import Testing

/// Stopping a server never waits for the requests it is holding.
@Suite(.onBlockingThreads) struct StopTests {
    /// With a `timeout` request hanging (it never answers; the client would wait 30 s), `stop()` returns
    /// at once and the client gets a transport error soon after. The bounds leave room for a loaded CI
    /// machine (2.8 s measured there for the error) and stay far below the client's 30 s.
    @Test func stopWithAHangingRequestReturnsAtOnce() async throws {
        let mishap = try Mishap.start(scenarios: defaultScenarios)
        let session = mishap.session()
        let client = mishap.client(in: session, timeout: 30)
        let hanging = Task { await apiError { try await client.checkUserNameAvailable("timeout") } }
        let deadline = ContinuousClock.now + .seconds(30)  // a loaded CI machine may take seconds to start
        while mishap.requests(session: session).isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(mishap.requests(session: session).map(\.rule) == ["timeout"])

        let start = ContinuousClock.now
        mishap.stop()
        #expect(start.duration(to: .now) < .seconds(5))

        let error = await hanging.value
        #expect(start.duration(to: .now) < .seconds(10))
        guard case .transport? = error else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
    }
}
