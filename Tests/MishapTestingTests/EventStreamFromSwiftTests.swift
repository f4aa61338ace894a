import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTesting
import MishapTestSupport
import Testing

/// Streams of events from MishapTesting, with URLSession: a stream reset after three events is
/// resumed with `Last-Event-ID`, a live stream's entry grows event by event, and
/// `RecordedRequest.eventStream` and `resumes` show what was sent, how it ended, and which
/// stream a reconnection resumed. The first test is docs/swift.md's example.
@Suite(.onBlockingThreads) struct EventStreamFromSwiftTests {
    @Test func aStreamResetAfterThreeEventsIsResumedFromTheLastID() async throws {
        let feed = """
            endpoint: GET /feed
            rules:
              - name: resumed
                when: { headers: { Last-Event-ID: "3" } }
                respond: { events: [ { id: 4, data: four }, { id: 5, data: five } ] }
              - name: three then reset
                respond:
                  events: [ { id: 1, retry: 100, data: one }, { id: 2, data: two }, { id: 3, data: three } ]
                  fault: reset
            """
        try await Mishap.withServer(scenarios: .yaml(feed)) { mishap in
            let session = mishap.session()
            let client = FeedClient(url: mishap.url("/feed"), configuration: session.configuration)
            let events = try await client.follow()      // reads; after a break, waits `retry`, sends Last-Event-ID
            #expect(events.map(\.data) == ["one", "two", "three", "four", "five"])

            // The reconnection, once its stream is over: it sent the last id and resumed the first stream.
            let resumed = try await session.waitForRequest(path: "/feed") { $0.resumes != nil && $0.eventStream?.isLive == false }
            #expect(resumed.lastEventID == "3" && resumed.rule == "resumed")
            #expect(resumed.eventStream?.eventsSent == 2 && resumed.eventStream?.ending == .clean)
            let first = try await session.waitForRequest(path: "/feed") { $0.id == resumed.resumes && $0.eventStream?.isLive == false }
            let stream = try #require(first.eventStream)
            #expect(stream.eventsSent == 3 && stream.lastEventID == "3" && stream.retryMilliseconds == 100)
            #expect(stream.ending == .reset)
        }
    }

    static let live = """
        endpoint: GET /live
        rules:
          - name: three then a long wait
            respond:
              events: [ { id: a, data: one }, { id: b, data: two }, { id: c, data: three }, { id: d, data: four, delay: 60s } ]
        """

    @Test func aLiveStreamsEntryGrowsUntilTheClientLeaves() async throws {
        try await Mishap.withServer(scenarios: .yaml(Self.live)) { mishap in
            let session = mishap.session()
            let connection = StreamConnection(URLRequest(url: mishap.url("/live")), configuration: session.configuration)
            let live = try await session.waitForRequest(path: "/live") { $0.eventStream?.eventsSent == 3 }
            let stream = try #require(live.eventStream)
            #expect(stream.isLive && stream.ending == nil && stream.lastEventID == "c" && live.status == 200)
            #expect(live.resumes == nil && live.lastEventID == nil)
            // The client got the three events the entry counts.
            #expect(await eventually(within: .seconds(10)) { FeedClient.parse(connection.text).events.count == 3 })

            connection.cancel()
            _ = await connection.finished()
            let left = try await session.waitForRequest(path: "/live") { $0.eventStream?.isLive == false }
            #expect(left.eventStream?.ending == .cut && left.eventStream?.eventsSent == 3)
        }
    }

    @Test func aStalledStreamIsLiveUntilTheClientLeavesThenEndsAsAStall() async throws {
        let stalled = """
            endpoint: GET /stalled
            rules:
              - { name: stalled, respond: { events: [ { id: 1, data: one } ], fault: stall } }
            """
        try await Mishap.withServer(scenarios: .yaml(stalled)) { mishap in
            let session = mishap.session()
            let connection = StreamConnection(URLRequest(url: mishap.url("/stalled")), configuration: session.configuration)
            let live = try await session.waitForRequest(path: "/stalled") { $0.eventStream?.eventsSent == 1 }
            #expect(live.eventStream?.isLive == true)
            #expect(await eventually(within: .seconds(10)) { FeedClient.parse(connection.text).events.count == 1 })
            connection.cancel()
            _ = await connection.finished()
            let left = try await session.waitForRequest(path: "/stalled") { $0.eventStream?.isLive == false }
            #expect(left.eventStream?.ending == .stall && left.eventStream?.eventsSent == 1)
        }
    }

    @Test func aReconnectionWithAnIDNoStreamSentResumesNothing() async throws {
        try await Mishap.withServer(scenarios: .yaml(Self.live)) { mishap in
            let session = mishap.session()
            var request = URLRequest(url: mishap.url("/live"))
            request.setValue("zzz", forHTTPHeaderField: "Last-Event-ID")
            let connection = StreamConnection(request, configuration: session.configuration)
            let live = try await session.waitForRequest(path: "/live") { $0.eventStream?.eventsSent == 3 }
            #expect(live.lastEventID == "zzz" && live.resumes == nil)
            connection.cancel()
            _ = await connection.finished()
        }
    }
}
