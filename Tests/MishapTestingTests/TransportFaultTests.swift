import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTesting
import MishapTestSupport
import Testing

/// The transport faults of the failure catalogue: the client gets no usable answer and reports
/// `.transport`, on both endpoints, without retrying. Which `URLError` code URLSession gives each
/// fault is MishapHTTPTests' `FaultTests.urlSessionReportsTheFault`; that the client passes the
/// code on is `clientTimeoutIsATransportError`'s `.timedOut`.
@Suite(.onBlockingThreads) struct TransportFaultTests {
    /// A trigger (a user name, or the local part of a login email) and the fault the scenario
    /// file names for it, as the journal records it.
    struct Fault: Sendable, CustomTestStringConvertible {
        let trigger: String
        let fault: String
        var testDescription: String { trigger }
    }

    static let faults = [
        Fault(trigger: "reset", fault: "reset"),
        Fault(trigger: "dropped", fault: "close"),
        Fault(trigger: "garbage", fault: "garbage"),
        Fault(trigger: "truncated", fault: "truncate"),
        Fault(trigger: "truncatedchunked", fault: "truncate-chunked"),
    ]

    /// Asks for `trigger` on `endpoint` through the seed's client.
    static func send(_ trigger: String, on endpoint: String, with client: AuthenticationService) async -> APIError? {
        if endpoint == "login" {
            await apiError { try await client.login(email: "\(trigger)@x.com", password: "secret") }
        } else {
            await apiError { try await client.checkUserNameAvailable(trigger) }
        }
    }

    /// Each fault is a `.transport` error, sent once.
    @Test(arguments: ["isUserNameAvailable", "login"], faults)
    func faultIsATransportError(endpoint: String, fault: Fault) async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            let error = await Self.send(fault.trigger, on: endpoint, with: mishap.client(in: session))
            guard case .transport? = error else {
                Issue.record("expected a transport error, got \(String(describing: error))")
                return
            }
            #expect(mishap.requests(session: session).map(\.fault) == [fault.fault])
        }
    }

    /// `timeout` never answers and `slowpoke` answers after 1.5 s: a client with a 1 s timeout reports `.timedOut`.
    @Test(arguments: ["isUserNameAvailable", "login"], ["timeout", "slowpoke"])
    func clientTimeoutIsATransportError(endpoint: String, trigger: String) async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            // swift-corelibs-foundation counts the timeout in whole seconds: 0.5 gives up at once.
            let client = mishap.client(in: mishap.session(), timeout: 1)
            let start = ContinuousClock.now
            let error = await Self.send(trigger, on: endpoint, with: client)
            let waited = start.duration(to: .now)
            if trigger == "slowpoke" && error == nil {
                // URLSession fires its timer on its one shared thread: on a loaded machine it can
                // fire half a second late, after slowpoke's answer (1.5 s at the earliest). Then
                // the answer must really have come after the client's second.
                #expect(waited >= .seconds(1.5), "answered after \(waited), inside the client's 1 s timeout")
                return
            }
            #expect(error == .transport(.timedOut), "\(String(describing: error))")
            // `.timedOut` already shows the answer never came in time; the lower bound shows the
            // client waited its second (the upper one is loose: a loaded machine stalls timers).
            #expect(waited >= .seconds(0.9) && waited < .seconds(10), "\(waited)")
            // The client may give up before a stalled server thread has even taken the request.
            let rule = trigger == "timeout" ? "timeout" : "slowpoke"
            #expect(await eventually(within: .seconds(5)) { mishap.requests().map(\.rule) == [rule] }, "\(mishap.requests().map(\.rule))")
        }
    }
}
