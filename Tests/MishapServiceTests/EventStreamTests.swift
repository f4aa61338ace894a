import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import MishapHTTP
import MishapService
import MishapTestSupport
import Testing

/// Server-Sent Events over real sockets: the exact bytes on the wire (chunked), the delays and
/// heartbeats between events, each fault as the client sees it, `repeat`, the client leaving and
/// the server stopping mid-stream, and the journal's record of a stream and of a reconnection.
@Suite(.onBlockingThreads) struct EventStreamTests {
    static let yaml = """
        endpoints:
          - endpoint: GET /clean
            rules:
              - name: clean
                respond:
                  events:
                    - { id: 1, event: update, data: "hello", retry: 2000 }
                    - { id: 2, data: "line one\\nline two", delay: 300ms }
          - endpoint: GET /beat
            rules:
              - name: beat
                respond:
                  events: [ { data: late, delay: 450ms } ]
                  heartbeat: 100ms
          - endpoint: GET /reset
            rules:
              - name: reset
                respond:
                  events: [ { id: 1, data: one }, { id: 2, data: two } ]
                  fault: reset
          - endpoint: GET /close
            rules:
              - name: close
                respond:
                  events: [ { id: 1, data: one } ]
                  fault: close
          - endpoint: GET /stall
            rules:
              - name: stall
                respond:
                  events: [ { id: 1, data: one } ]
                  heartbeat: 50ms
                  fault: stall
          - endpoint: GET /again
            rules:
              - name: again
                respond:
                  events: [ { id: "{{query.x}}", data: a }, { data: b, malformed: unterminated } ]
                  repeat: 3
          - endpoint: GET /slow
            rules:
              - name: slow
                respond:
                  events: [ { id: 1, data: one }, { id: 2, data: two, delay: 20s } ]
          - endpoint: GET /apart
            rules:
              - name: apart
                respond:
                  events: [ { id: 1, data: first }, { id: 2, data: second, delay: 6s } ]
          - endpoint: GET /feed
            rules:
              - name: resume
                when: { headers: { Last-Event-ID: "2" } }
                respond:
                  events: [ { id: 3, data: three } ]
              - name: fresh
                respond:
                  events: [ { id: 1, data: one, retry: 200 }, { id: 2, data: two } ]
                  fault: reset
        """

    /// A request for `target` on a new connection, closed by the server after the answer.
    static func open(_ harness: TestServer, _ target: String, headers: [(String, String)] = []) throws -> RawHTTPConnection {
        let connection = try harness.connect()
        try connection.sendRequest("GET", target, headers: [("Connection", "close")] + headers)
        return connection
    }

    /// The head and the raw body (chunked, as sent) of what arrived.
    static func split(_ bytes: [UInt8]) -> (head: String, body: [UInt8]) {
        let marker = Array("\r\n\r\n".utf8)
        guard let end = (0...(max(bytes.count - 4, 0))).first(where: { Array(bytes[$0..<min($0 + 4, bytes.count)]) == marker }) else {
            return (String(decoding: bytes, as: UTF8.self), [])
        }
        return (String(decoding: bytes[..<end], as: UTF8.self), Array(bytes[(end + 4)...]))
    }

    /// The chunks' data joined, and whether the terminating chunk came.
    static func dechunk(_ body: [UInt8]) -> (data: [UInt8], terminated: Bool) {
        var data: [UInt8] = []
        var index = 0
        while index < body.count {
            guard let lineEnd = (index..<(body.count - 1)).first(where: { body[$0] == 0x0D && body[$0 + 1] == 0x0A }),
                  let size = Int(String(decoding: body[index..<lineEnd], as: UTF8.self), radix: 16) else { break }
            if size == 0 { return (data, true) }
            let start = lineEnd + 2
            guard start + size <= body.count else {
                data += body[start...]
                break
            }
            data += body[start..<(start + size)]
            index = start + size + 2
        }
        return (data, false)
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func aStreamIsSentAsDeclaredAndEndsCleanly() throws {
        let harness = try TestServer(yaml: Self.yaml)
        let connection = try Self.open(harness, "/clean")
        let started = ContinuousClock.now
        let (pieces, end) = try connection.readPiecesToEnd()
        #expect(end == .closed)
        let (head, body) = Self.split(pieces.flatMap(\.bytes))
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(head.contains("\r\nContent-Type: text/event-stream; charset=utf-8\r\n"))
        #expect(head.contains("\r\nCache-Control: no-cache\r\n"))
        #expect(head.contains("\r\nTransfer-Encoding: chunked"))
        let (data, terminated) = Self.dechunk(body)
        #expect(terminated, "a clean end sends the last chunk")
        #expect(Self.text(data) == "id: 1\nevent: update\nretry: 2000\ndata: hello\n\nid: 2\ndata: line one\ndata: line two\n\n")
        // The second event comes its delay after the first.
        let second = try #require(pieces.first { Self.text($0.bytes).contains("line one") })
        let waited = started.duration(to: second.at)
        #expect(waited >= .milliseconds(280) && waited < .seconds(10), "\(waited)")
    }

    @Test func heartbeatsFillTheWait() throws {
        let harness = try TestServer(yaml: Self.yaml)
        let (bytes, end) = try Self.open(harness, "/beat").readUntilEnd()
        #expect(end == .closed)
        let data = Self.text(Self.dechunk(Self.split(bytes).body).data)
        let beats = data.components(separatedBy: ": heartbeat\n").count - 1
        // 450 ms of waiting at one beat per 100 ms without a byte: four on time, fewer when a
        // loaded machine wakes the timer late, never more than five.
        #expect(beats >= 1 && beats <= 5, "\(data)")
        #expect(data.hasSuffix(": heartbeat\ndata: late\n\n"))
    }

    @Test func aResetComesAfterTheEvents() throws {
        let harness = try TestServer(yaml: Self.yaml)
        let (bytes, end) = try Self.open(harness, "/reset").readUntilEnd()
        #expect(end == .failed(errno: ECONNRESET))
        let (data, terminated) = Self.dechunk(Self.split(bytes).body)
        #expect(!terminated)
        #expect(Self.text(data) == "id: 1\ndata: one\n\nid: 2\ndata: two\n\n")
    }

    @Test func aCloseEndsTheStreamWithoutItsLastChunk() throws {
        let harness = try TestServer(yaml: Self.yaml)
        let (bytes, end) = try Self.open(harness, "/close").readUntilEnd()
        #expect(end == .closed)
        let (data, terminated) = Self.dechunk(Self.split(bytes).body)
        #expect(!terminated, "the client sees a body cut short")
        #expect(Self.text(data) == "id: 1\ndata: one\n\n")
    }

    @Test func aStallSendsNothingMoreUntilTheClientLeaves() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let connection = try Self.open(harness, "/stall")
        var received: [UInt8] = []
        let end = connection.read(into: &received, until: .now + .milliseconds(800))
        #expect(end == .timedOut, "the connection is held open")
        #expect(Self.text(Self.dechunk(Self.split(received).body).data) == "id: 1\ndata: one\n\n", "no heartbeat after the stall")
        connection.close()
        let entry = try await Self.streamEntry(harness, path: "/stall")
        #expect(entry["events"] as? Int == 1)
        #expect(entry["ending"] as? String == "stall")
    }

    @Test func repeatSendsTheListAgain() throws {
        let harness = try TestServer(yaml: Self.yaml)
        let (bytes, _) = try Self.open(harness, "/again?x=7").readUntilEnd()
        let data = Self.text(Self.dechunk(Self.split(bytes).body).data)
        #expect(data == String(repeating: "id: 7\ndata: a\n\ndata: b\n", count: 3))
    }

    @Test func aStreamEndsSoonAfterItsClientLeaves() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let connection = try Self.open(harness, "/slow")
        var received: [UInt8] = []
        _ = connection.read(into: &received, until: .now + .seconds(5)) { Self.text($0).contains("data: one") }
        connection.close()
        let entry = try await Self.streamEntry(harness, path: "/slow")
        #expect(entry["events"] as? Int == 1)
        #expect(entry["lastEventId"] as? String == "1")
        #expect(entry["ending"] as? String == "cut")
    }

    @Test func aStoppingServerEndsItsStreams() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let connection = try Self.open(harness, "/slow")
        var received: [UInt8] = []
        _ = connection.read(into: &received, until: .now + .seconds(5)) { Self.text($0).contains("data: one") }
        let started = ContinuousClock.now
        harness.instance.stop()
        let end = connection.read(into: &received, until: .now + .seconds(5))
        #expect(end == .closed || end == .reset)
        #expect(started.duration(to: .now) < .seconds(3))
    }

    @Test func aReconnectionIsTiedToTheStreamItResumes() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let first = try Self.open(harness, "/feed", headers: [("X-Mishap-Session", "s1")])
        let (firstBytes, firstEnd) = try first.readUntilEnd()
        #expect(firstEnd == .failed(errno: ECONNRESET))
        #expect(Self.text(firstBytes).contains("retry: 200\n"))
        let (bytes, _) = try Self.open(harness, "/feed", headers: [("X-Mishap-Session", "s1"), ("Last-Event-ID", "2")]).readUntilEnd()
        #expect(Self.text(Self.dechunk(Self.split(bytes).body).data) == "id: 3\ndata: three\n\n")
        var entries: [[String: Any]] = []
        _ = try await eventually(within: .seconds(5)) {
            entries = try await harness.journal("path=/feed")
            return entries.count == 2 && (entries[1]["eventStream"] as? [String: Any])?["over"] as? Bool == true
        }
        #expect(entries.count == 2)
        let stream = try #require(entries.first?["eventStream"] as? [String: Any])
        #expect(stream["events"] as? Int == 2 && stream["lastEventId"] as? String == "2")
        #expect(stream["retryMs"] as? Int == 200 && stream["ending"] as? String == "reset")
        #expect(entries.last?["rule"] as? String == "resume")
        #expect(entries.last?["resumesStream"] as? Int == entries.first?["id"] as? Int)
        #expect(entries.first?["resumesStream"] == nil)
    }

    @Test func aForcedRuleCanBeAStream() throws {
        let harness = try TestServer(yaml: Self.yaml)
        let (bytes, _) = try Self.open(harness, "/feed", headers: [("X-Mishap-Rule", "resume")]).readUntilEnd()
        #expect(Self.text(Self.dechunk(Self.split(bytes).body).data) == "id: 3\ndata: three\n\n")
    }

    /// A runtime rule for one session (`POST /__mishap/rules?session=`) can be a stream.
    @Test func aRuntimeRuleForASessionCanBeAStream() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let rule = "endpoint: GET /clean\nrules:\n  - name: live\n    respond: { events: [ { id: 9, data: live } ], fault: close }\n"
        let added = try await harness.send("POST", "/__mishap/rules?session=r1", body: Data(rule.utf8))
        #expect(added.status == 201, "\(added.text)")
        let (bytes, end) = try Self.open(harness, "/clean", headers: [("X-Mishap-Session", "r1")]).readUntilEnd()
        #expect(end == .closed)
        #expect(Self.dechunk(Self.split(bytes).body) == (Array("id: 9\ndata: live\n\n".utf8), false))
        let (other, _) = try Self.open(harness, "/clean", headers: [("X-Mishap-Session", "r2")]).readUntilEnd()
        #expect(Self.text(Self.dechunk(Self.split(other).body).data).hasPrefix("id: 1\n"), "another session keeps the file's stream")
    }

    /// Under a session's network profile, its latency comes before the head and its loss
    /// resets the request before any byte.
    @Test func aNetworkProfileDelaysOrResetsTheStream() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let slow = try await harness.send("PUT", "/__mishap/network?session=n1", body: Data(#"{"latency": "400ms"}"#.utf8))
        #expect(slow.status == 200, "\(slow.text)")
        let started = ContinuousClock.now
        let (bytes, firstEnd) = try Self.open(harness, "/reset", headers: [("X-Mishap-Session", "n1")]).readUntilEnd()
        #expect(firstEnd == .failed(errno: ECONNRESET))
        #expect(started.duration(to: .now) >= .milliseconds(380) && started.duration(to: .now) < .seconds(10))
        #expect(Self.text(Self.dechunk(Self.split(bytes).body).data) == "id: 1\ndata: one\n\nid: 2\ndata: two\n\n")
        let lossy = try await harness.send("PUT", "/__mishap/network?session=n2", body: Data(#"{"loss": 1}"#.utf8))
        #expect(lossy.status == 200, "\(lossy.text)")
        let (nothing, end) = try Self.open(harness, "/clean", headers: [("X-Mishap-Session", "n2")]).readUntilEnd()
        #expect(nothing.isEmpty && end == .failed(errno: ECONNRESET))
    }

    /// 200 streams waiting at once hold no worker thread: each has its first event and waits 20 s
    /// for its second, and a plain request is answered meanwhile. Were a worker held per
    /// waiting stream, the request would wait for the streams' 20 s.
    @Test func twoHundredStreamsWaitingBlockNoWorker() throws {
        let harness = try TestServer(yaml: Self.yaml)
        let connections = try (0..<200).map { _ in try Self.open(harness, "/slow") }
        defer { connections.forEach { $0.close() } }
        for connection in connections {
            var received: [UInt8] = []
            let end = connection.read(into: &received, until: .now + .seconds(10)) { Self.text($0).contains("data: one\n\n") }
            #expect(end == .satisfied, "\(end): \(Self.text(received))")
        }
        let started = ContinuousClock.now
        let plain = try harness.connect()
        try plain.sendRequest("GET", "/__mishap/health")
        let answer = try plain.readResponse()
        #expect(answer.status == 200)
        #expect(started.duration(to: .now) < .seconds(5), "\(started.duration(to: .now))")
    }

    /// URLSession (libcurl under FoundationNetworking) gets each event as it is sent.
    @Test func urlSessionReceivesEventsAsTheyCome() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let collector = StreamCollector()
        let session = URLSession(configuration: .ephemeral, delegate: collector, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        session.dataTask(with: harness.url("/apart")).resume()
        #expect(await eventually(within: .seconds(20)) { collector.finished })
        let pieces = collector.pieces
        #expect(collector.failure == nil)
        #expect(Self.text(pieces.flatMap(\.bytes)) == "id: 1\ndata: first\n\nid: 2\ndata: second\n\n")
        // The second event is sent 6 s after the first: the first reached the delegate long
        // before it (were the body buffered to its end, both would come at once). 6 s, as a
        // loaded machine's URLSession took over 2 s to hand over the first.
        let first = try #require(pieces.first)
        let second = try #require(pieces.first { Self.text($0.bytes).contains("second") })
        #expect(first.at.duration(to: second.at) >= .seconds(3), "the first event came \(first.at.duration(to: second.at)) before the second")
    }

    /// What URLSession (FoundationNetworking) reports when a stream breaks: its events, then
    /// -1005 (networkConnectionLost) for a reset, -1 (unknown, "transfer closed with outstanding
    /// read data remaining") for a close.
    @Test(arguments: [("/reset", URLError.Code.networkConnectionLost), ("/close", URLError.Code.unknown)])
    func urlSessionSeesABreakAsAnError(_ path: String, _ expected: URLError.Code) async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let collector = StreamCollector()
        let session = URLSession(configuration: .ephemeral, delegate: collector, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        session.dataTask(with: harness.url(path)).resume()
        #expect(await eventually(within: .seconds(5)) { collector.finished })
        let code = (collector.failure as? URLError)?.code
        #expect(code == expected, "\(String(describing: collector.failure))")
        #expect(Self.text(collector.pieces.flatMap(\.bytes)).hasPrefix("id: 1\ndata: one\n\n"))
    }

    /// The `eventStream` of the journal's entry for `path`, once the stream is over.
    static func streamEntry(_ harness: TestServer, path: String) async throws -> [String: Any] {
        var stream: [String: Any] = [:]
        let over = try await eventually(within: .seconds(5)) {
            stream = try await harness.journal("path=\(path)").last?["eventStream"] as? [String: Any] ?? [:]
            return stream["over"] as? Bool == true
        }
        #expect(over, "the stream was noted as over")
        return stream
    }
}

/// What a URLSession data task received, piece by piece, and how it ended.
final class StreamCollector: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var received: [(bytes: [UInt8], at: ContinuousClock.Instant)] = []
    private var done = false
    private var error: (any Error)?

    var pieces: [(bytes: [UInt8], at: ContinuousClock.Instant)] { lock.withLock { received } }
    var finished: Bool { lock.withLock { done } }
    var failure: (any Error)? { lock.withLock { error } }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { received.append((Array(data), ContinuousClock.now)) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.withLock {
            self.error = error
            done = true
        }
    }
}
