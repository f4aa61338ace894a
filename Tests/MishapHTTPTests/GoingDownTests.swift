import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MishapHTTP
import MishapTestSupport
import Synchronization
import Testing

/// The serving port taken down and brought back (`HTTPServer.goDown`): while down, new
/// connections are refused (`ECONNREFUSED`, curl's exit 7), a request in flight still gets its
/// answer, and a keep-alive connection left idle is closed, so a client's next request
/// reconnects and is refused; when the time is up, the same port serves again. Serialized: while
/// a server is down its port is free, and a server of another test binding port 0 could take it.
@Suite(.onBlockingThreads, .serialized) struct GoingDownTests {
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

    /// A server on two threads that can go down.
    /// A server on a port below the ephemeral range (32768 and up on Linux): while it is down,
    /// its port is free, and a port given to another test's server (port 0) or client comes
    /// from that range, so none takes it meanwhile. (On an ephemeral port, another test's
    /// server was given it: this one's refusal was that one's answer, and a request meant for
    /// this one reached that one.)
    static func server(headTimeout: Int = 10) throws -> TestServer {
        var failure: Error?
        for _ in 0..<50 {
            do {
                return try TestServer(yaml: yaml, configuration: ServerConfiguration(
                    port: UInt16.random(in: 20_000..<32_000), threads: 2, headTimeoutSeconds: headTimeout, canGoDown: true))
            } catch {
                failure = error
            }
        }
        throw failure ?? CancellationError()
    }

    /// The errno of a connect to `port`, or 0 when it connects.
    static func connectErrno(_ port: UInt16) -> Int32 {
        do {
            _ = try RawHTTPConnection(port: port, timeoutSeconds: 2)
            return 0
        } catch let failure as RawHTTPConnection.Failure {
            return failure.errno
        } catch {
            return -1
        }
    }

    /// One GET of /ok on a new connection: its body, or the error.
    static func getOK(_ port: UInt16) -> String {
        do {
            let connection = try RawHTTPConnection(port: port, timeoutSeconds: 5)
            try connection.sendRequest("GET", "/ok")
            return try connection.readResponse().text
        } catch {
            return "\(error)"
        }
    }

    /// curl's exit status for a GET of `url`.
    static func curl(_ url: String) async throws -> Int32? {
        try await onOwnThread {
            try spawnAndWait(["curl", "-sS", "-o", "/dev/null", "--max-time", "5", url], standardOutput: "/dev/null", standardError: "/dev/null")
        }
    }

    @Test func newConnectionsAreRefusedWhileDownAndServedWhenTheTimeIsUp() async throws {
        let server = try Self.server()
        let port = server.port
        #expect(try await onOwnThread { Self.getOK(port) } == "ok")
        let wentDown = ContinuousClock.now
        try server.server.goDown(forMilliseconds: 5000)
        #expect(server.server.isDown)
        let remaining = try #require(server.server.downRemaining)
        #expect(remaining > .zero && remaining <= .milliseconds(5000))
        // A loaded machine can take seconds to start a thread or curl: each answer counts only
        // when the server was still down once it came (so it was down the whole time). The
        // first, a bare connect, comes well within the 5 s.
        let refused = try await onOwnThread { Self.connectErrno(port) }
        if server.server.isDown {
            #expect(refused == ECONNREFUSED, "a connect while down")
        }
        let whileDown = try await Self.curl("http://127.0.0.1:\(port)/ok")
        if server.server.isDown {
            #expect(whileDown == 7, "curl's exit status while down")
        }
        let back = await eventually(within: .seconds(10), every: .milliseconds(20)) { !server.server.isDown }
        let downFor = ContinuousClock.now - wentDown
        #expect(back, "still down after \(downFor)")
        #expect(downFor >= .milliseconds(4900), "back after \(downFor)")
        #expect(server.port == port)
        #expect(try await onOwnThread { Self.getOK(port) } == "ok")
        #expect(try await Self.curl("http://127.0.0.1:\(port)/ok") == 0)
    }

    @Test func aRequestInFlightIsAnsweredThenItsConnectionClosed() async throws {
        let server = try Self.server()
        let port = server.port
        let connection = SendableBox(try RawHTTPConnection(port: port, timeoutSeconds: 10))
        try connection.value.sendRequest("GET", "/slow")
        try await Task.sleep(for: .milliseconds(300))  // the delay has begun
        try server.server.goDown(forMilliseconds: 10_000)
        #expect(try await onOwnThread { Self.connectErrno(port) } == ECONNREFUSED)
        let (answer, end) = try await onOwnThread { () -> (String, String) in
            let answer = try connection.value.readResponse()
            var rest: [UInt8] = []
            let end = connection.value.read(into: &rest, until: .now + .seconds(3))
            return ("\(answer.status) \(answer.text)", "\(end)")
        }
        #expect(answer == "200 slow")
        #expect(end == "closed", "the connection after its answer while down: \(end)")
        try server.server.comeBack()
        #expect(!server.server.isDown)
        #expect(try await onOwnThread { Self.getOK(port) } == "ok")
    }

    @Test func anIdleKeepAliveConnectionIsClosedSoTheNextRequestMeetsTheRefusal() async throws {
        // With the head deadline off, the connection table is still kept for going down.
        let server = try Self.server(headTimeout: 0)
        let port = server.port
        let connection = SendableBox(try RawHTTPConnection(port: port, timeoutSeconds: 10))
        try connection.value.sendRequest("GET", "/ok")
        #expect(try connection.value.readResponse().text == "ok")
        let started = ContinuousClock.now
        try server.server.goDown(forMilliseconds: 10_000)
        let end = try await onOwnThread { () -> String in
            var rest: [UInt8] = []
            return "\(connection.value.read(into: &rest, until: .now + .seconds(3)))"
        }
        let closedAfter = ContinuousClock.now - started
        #expect(end == "closed", "the idle connection: \(end)")
        #expect(closedAfter < .seconds(1), "closed after \(closedAfter)")
        // What a pool does next: a new connection, refused.
        #expect(try await onOwnThread { Self.connectErrno(port) } == ECONNREFUSED)
        try server.server.comeBack()
        #expect(try await onOwnThread { Self.getOK(port) } == "ok")
    }

    @Test func aSecondGoingDownReplacesTheFirstsEnd() async throws {
        let server = try Self.server()
        try server.server.goDown(forMilliseconds: 60_000)
        let started = ContinuousClock.now
        try server.server.goDown(forMilliseconds: 300)
        let back = await eventually(within: .seconds(5), every: .milliseconds(10)) { !server.server.isDown }
        #expect(back)
        #expect(ContinuousClock.now - started < .seconds(3))
        // The first going down's timer must not bring it back early, nor the second's end a later one.
        try server.server.goDown(forMilliseconds: 1_000)
        try await Task.sleep(for: .milliseconds(400))
        #expect(server.server.isDown)
        try server.server.comeBack()
        try server.server.comeBack()  // up already: nothing happens
        #expect(try await onOwnThread { Self.getOK(server.port) } == "ok")
    }

    @Test func aServerNotConfiguredToGoDownRefusesAndDurationsAreBounded() throws {
        let plain = try TestServer(yaml: Self.yaml)
        #expect(throws: GoingDownError.notEnabled) { try plain.server.goDown(forMilliseconds: 1000) }
        #expect(!plain.server.canGoDown)
        let downable = try Self.server()
        #expect(downable.server.canGoDown)
        #expect(throws: GoingDownError.durationOutOfRange(milliseconds: 0)) { try downable.server.goDown(forMilliseconds: 0) }
        #expect(throws: GoingDownError.durationOutOfRange(milliseconds: 86_400_001)) {
            try downable.server.goDown(forMilliseconds: 86_400_001)
        }
        #expect(!downable.server.isDown)
    }

    @Test func goingDownAndComingBackUnderLoadCrashesNothing() async throws {
        let server = try Self.server()
        let port = server.port
        let tally = LoadTally()
        // 16 clients, each on keep-alive connections of a few requests, reconnecting on any error.
        let clients = (0..<16).map { _ in
            Task.detached { [tally] in
                try await onOwnThread {
                    while !tally.stop.load(ordering: .relaxed) {
                        do {
                            let connection = try RawHTTPConnection(port: port, timeoutSeconds: 5)
                            for _ in 0..<5 {
                                try connection.sendRequest("GET", "/ok")
                                _ = try connection.readResponse()
                                tally.answered.add(1, ordering: .relaxed)
                            }
                        } catch let failure as RawHTTPConnection.Failure where failure.errno == ECONNREFUSED {
                            tally.refused.add(1, ordering: .relaxed)
                            usleep(2_000)
                        } catch {
                            tally.other.add(1, ordering: .relaxed)
                        }
                    }
                }
            }
        }
        for _ in 0..<10 {
            try await Task.sleep(for: .milliseconds(150))
            try server.server.goDown(forMilliseconds: 100)
            _ = await eventually(within: .seconds(5), every: .milliseconds(5)) { !server.server.isDown }
        }
        try await Task.sleep(for: .milliseconds(150))
        tally.stop.store(true, ordering: .relaxed)
        for client in clients { try await client.value }
        let counts = (tally.answered.load(ordering: .relaxed), tally.refused.load(ordering: .relaxed), tally.other.load(ordering: .relaxed))
        print("under load, 10 times down for 100 ms: \(counts.0) answered, \(counts.1) refused, \(counts.2) other errors (closed idle connections)")
        #expect(counts.0 > 100)
        #expect(counts.1 > 0, "no connection was refused")
        #expect(try await onOwnThread { Self.getOK(port) } == "ok")
        // The last answer's request ends just after the client has read it.
        #expect(await eventually { server.server.requestsInFlight == 0 })
    }
}

/// What the clients of the load test saw, counted across their threads.
final class LoadTally: Sendable {
    let stop = Atomic<Bool>(false)
    let answered = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
    let other = Atomic<Int>(0)
}
