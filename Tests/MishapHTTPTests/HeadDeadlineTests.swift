import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MishapHTTP
import MishapTestSupport
import Synchronization
import Testing

/// Slow senders (slowloris): a connection has `headTimeoutSeconds` to send a whole request head
/// however it trickles it, and at the connection limit the oldest connections still sending a
/// head make room for new clients. Without either, connections that send a header line now and
/// then hold their slots forever (each line resets the idle timeout), and a new client waits in
/// the listen queue unanswered.
@Suite(.onBlockingThreads) struct HeadDeadlineTests {
    static let yaml = """
        endpoints:
          - endpoint: GET /ok
            rules:
              - name: ok
                respond: { text: ok }
          - endpoint: GET /slow
            rules:
              - name: slow
                respond: { delay: 1500, text: slow }
        """

    /// A server on two threads whose connections have `headTimeout` seconds to send a head.
    static func server(headTimeout: Int, connectionLimit: Int = 4096) throws -> TestServer {
        try TestServer(yaml: yaml, configuration: ServerConfiguration(
            port: 0, threads: 2, connectionLimit: connectionLimit, connectionTimeoutSeconds: 30,
            headTimeoutSeconds: headTimeout))
    }

    /// What a normal client sees while a flood runs: each request on a new connection, its
    /// answer (or the error) and how long it took, one after another.
    static func normalRequests(to port: UInt16, count: Int) -> [(answer: String, took: Duration)] {
        var outcomes: [(answer: String, took: Duration)] = []
        for _ in 0..<count {
            let started = ContinuousClock.now
            do {
                let connection = try RawHTTPConnection(port: port, timeoutSeconds: 10)
                try connection.sendRequest("GET", "/ok")
                outcomes.append((try connection.readResponse().text, .now - started))
            } catch {
                outcomes.append(("\(error)", .now - started))
                break  // the next would wait as long
            }
        }
        return outcomes
    }

    @Test func aConnectionTricklingItsHeadIsClosedAtTheDeadlineThoughItKeepsSending() async throws {
        let server = try Self.server(headTimeout: 1)
        let report = try await onOwnThread { () -> (end: String, after: Duration, received: Int) in
            let connection = try server.connect(timeoutSeconds: 2)
            let started = ContinuousClock.now
            try connection.send("GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            var received: [UInt8] = []
            // A header line every 200 ms for up to 8 s: far more often than the idle timeout.
            for line in 0..<40 {
                let end = connection.read(into: &received, until: .now + .milliseconds(200))
                if end != .timedOut { return ("\(end)", .now - started, received.count) }
                if let code = connection.write(Array("X-Trickle-\(line): a\r\n".utf8)) {
                    return ("send failed, errno \(code)", .now - started, received.count)
                }
            }
            return ("still open", .now - started, received.count)
        }
        #expect(["closed", "reset"].contains(report.end) || report.end.hasPrefix("send failed"),
                "the trickling connection after \(report.after): \(report.end)")
        #expect(report.after >= .milliseconds(900), "closed before its deadline, after \(report.after)")
        #expect(report.received == 0, "a head that never ended was answered")
    }

    @Test func requestsBackToBackAndADelayedAnswerOutlastTheDeadline() async throws {
        // The deadline is for the head alone: a keep-alive connection busy for longer than it,
        // and a delayed answer longer than it, are not cut.
        let server = try Self.server(headTimeout: 1)
        let (answers, lastAnswered) = try await onOwnThread { () -> ([String], Duration) in
            let connection = try server.connect(timeoutSeconds: 5)
            var answers: [String] = []
            let started = ContinuousClock.now
            var lastAnswered = Duration.zero
            while ContinuousClock.now - started < .milliseconds(2500) {
                try connection.sendRequest("GET", "/ok")
                answers.append(try connection.readResponse().text)
                lastAnswered = ContinuousClock.now - started
                usleep(100_000)
            }
            try connection.sendRequest("GET", "/slow")
            answers.append(try connection.readResponse().text)
            return (answers, lastAnswered)
        }
        // Answered on the same connection well past the 1 s deadline. (How many fit in the
        // 2.5 s depends on the machine's load: about 20 when idle, 8 on a busy one.)
        #expect(answers.count >= 4 && lastAnswered > .milliseconds(1500), "\(answers.count) answers, the last after \(lastAnswered)")
        #expect(answers.dropLast().allSatisfy { $0 == "ok" } && answers.last == "slow", "\(answers)")
    }

    @Test func aFloodOfTricklingConnectionsAtTheLimitLetsNormalRequestsThrough() async throws {
        // 24 trickling connections for a limit of 20, each reopened once the server closes it;
        // with a 1 s deadline, normal requests are answered within seconds.
        let server = try Self.server(headTimeout: 1, connectionLimit: 20)
        let flood = TricklingFlood(port: server.port, connections: 24)
        defer { flood.stop() }
        try await Task.sleep(for: .milliseconds(800))
        let outcomes = try await onOwnThread { Self.normalRequests(to: server.port, count: 3) }
        #expect(outcomes.count == 3 && outcomes.allSatisfy { $0.answer == "ok" && $0.took < .seconds(10) },
                "normal requests during the flood: \(outcomes)")
        // The flood did fill the server: its connections are closed at their deadline.
        #expect(await eventually(within: .seconds(5)) { flood.reopened > 0 }, "the flood was never closed")
    }

    @Test func atTheLimitTheOldestHeadsMakeRoomLongBeforeTheDeadline() async throws {
        // The same flood with a 10 s deadline: the connections still sending a head are closed,
        // oldest first, to keep a tenth of the limit free, so a normal request is answered
        // well before any deadline could free a slot.
        let server = try Self.server(headTimeout: 10, connectionLimit: 20)
        let flood = TricklingFlood(port: server.port, connections: 24)
        defer { flood.stop() }
        try await Task.sleep(for: .milliseconds(800))
        let started = ContinuousClock.now
        let outcomes = try await onOwnThread { Self.normalRequests(to: server.port, count: 2) }
        #expect(ContinuousClock.now - started < .seconds(8), "took \(ContinuousClock.now - started): \(outcomes)")
        #expect(outcomes.count == 2 && outcomes.allSatisfy { $0.answer == "ok" }, "normal requests during the flood: \(outcomes)")
        // The flood did fill the server: its connections are closed to make room.
        #expect(await eventually(within: .seconds(3)) { flood.reopened > 0 }, "the flood was never closed")
    }
}

/// Connections that each send a request line, then a header line every 250 ms, and never end
/// their head; one the server closes is opened again, as an attacker would. Runs on a thread
/// of its own from `init` until `stop()`.
final class TricklingFlood: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let reopenings = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)

    init(port: UInt16, connections count: Int) {
        let thread = Thread { [self] in
            run(port: port, count: count)
            finished.signal()
        }
        thread.start()
    }

    /// How many connections the server closed and the flood opened again.
    var reopened: Int { reopenings.load(ordering: .relaxed) }

    /// Stops the flood and closes its connections; returns once they are closed. Once only.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
    }

    private func run(port: UInt16, count: Int) {
        var connections: [RawHTTPConnection?] = Array(repeating: nil, count: count)
        var line = 0
        while !stopping.load(ordering: .relaxed) {
            for index in connections.indices {
                if let connection = connections[index] {
                    if !connection.hasSomethingToRead, connection.write(Array("X-Trickle-\(line): a\r\n".utf8)) == nil { continue }
                    reopenings.add(1, ordering: .relaxed)
                }
                connections[index] = try? RawHTTPConnection(port: port, timeoutSeconds: 1)
                _ = connections[index]?.write(Array("GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8))
            }
            line += 1
            usleep(250_000)
        }
    }
}
