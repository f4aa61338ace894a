import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTesting
import MishapTestSupport
import Testing

/// `session.setNetwork(...)` over real sockets with URLSession: a session on a slow network
/// waits, another at the same time does not; a preset applies by name; `clearNetwork()` ends
/// it; a session offline is reset, then comes back; a bad duration is refused.
@Suite(.onBlockingThreads) struct NetworkTests {
    static func seconds(_ urlSession: URLSession, _ url: URL) async throws -> (Double, Int) {
        let start = ContinuousClock.now
        let (_, response) = try await urlSession.data(from: url)
        let elapsed = ContinuousClock.now - start
        return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
                (response as? HTTPURLResponse)?.statusCode ?? 0)
    }

    /// A URLSession for `session` that never answers from its cache (every request must reach Mishap).
    static func uncached(_ session: MishapSession) -> URLSession {
        let configuration = session.configuration
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }

    @Test func aSlowSessionWaitsAndAnotherDoesNot() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let url = mishap.url("/isUserNameAvailable?userName=alice")
            let slow = mishap.session()
            try slow.setNetwork(.custom(latency: .seconds(2)))
            let fast = mishap.session()
            let slowSession = Self.uncached(slow), fastSession = Self.uncached(fast)
            async let slowTook = Self.seconds(slowSession, url)
            async let fastTook = Self.seconds(fastSession, url)
            let ((slowSeconds, slowStatus), (fastSeconds, fastStatus)) = try await (slowTook, fastTook)
            #expect(slowStatus == 200 && fastStatus == 200)
            #expect(slowSeconds >= 1.95 && slowSeconds < 15, "\(slowSeconds)")
            #expect(fastSeconds + 1 < slowSeconds, "\(fastSeconds)")

            try slow.clearNetwork()
            let cleared = try await Self.seconds(slowSession, url).0
            #expect(cleared < slowSeconds, "cleared")
            try slow.setNetwork(.highLatency, for: .seconds(2))
            #expect(try slow.network()?.name == "high-latency")
            try await Task.sleep(for: .milliseconds(2200))
            let ended = try await Self.seconds(slowSession, url).0
            #expect(try slow.network() == nil && ended < 10, "ended by itself")
            #expect(throws: SessionTimeError.self) { try slow.setNetwork(.edge, for: .seconds(0)) }
        }
    }

    @Test func anOfflineSessionIsResetThenComesBack() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let url = mishap.url("/isUserNameAvailable?userName=alice")
            let session = mishap.session()
            try session.setNetwork(.custom(offline: .seconds(3)))
            let urlSession = Self.uncached(session)
            await #expect(throws: (any Error).self) { _ = try await urlSession.data(from: url) }
            try await Task.sleep(for: .milliseconds(3200))
            let back = try await Self.seconds(urlSession, url).1
            #expect(back == 200, "back")
            try session.setNetwork(.fullLoss)
            let another = mishap.url("/isUserNameAvailable?userName=bob")   // not one URLSession may have cached
            await #expect(throws: (any Error).self) { _ = try await urlSession.data(from: another) }
            #expect(NetworkCondition.preset("Very Bad Network")?.profile.name == "very-bad-network")
            #expect(NetworkCondition.preset("5g") == nil)
        }
    }
}
