import Foundation
import Logging
import MishapHTTP
import MishapService
import MishapTestSupport
import Testing

/// A request whose head came with `Content-Length` and whose body never came whole (the
/// client closed, as libcurl under URLSession does when it re-sends a POST on a reused
/// connection that was reset) is journaled with what arrived, marked `bodyIncomplete`, and
/// logged with its method and path; over raw sockets.
@Suite(.onBlockingThreads) struct IncompleteBodyTests {
    static let yaml = """
        endpoint: POST /login
        rules:
          - name: ok
            respond: { text: welcome }
        """

    /// Sends a head declaring a 20-byte body, then `sent` of it, then closes.
    static func sendCut(_ port: UInt16, _ target: String, sent: String, headers: [(String, String)] = []) async throws {
        _ = try await onOwnThread {
            let connection = try RawHTTPConnection(port: port)
            var head = "POST \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 20\r\nContent-Type: application/json\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            try connection.send(head + "\r\n" + sent)
            // Let the server read what was sent before the close.
            Thread.sleep(forTimeInterval: 0.1)
            connection.close()
            return true
        }
    }

    /// The journal's entries once `count` are there.
    static func entries(_ harness: TestServer, count: Int) async throws -> [[String: Any]] {
        var found: [[String: Any]] = []
        _ = try await eventually(within: .seconds(5)) {
            found = try await harness.journal()
            return found.count >= count
        }
        return found
    }

    @Test func aBodyThatNeverComesIsJournaledAndLogged() async throws {
        let pipe = LogPipe()
        let descriptor = pipe.writeEnd
        let logger = Logger(label: "mishap") { LineLogHandler(label: $0, level: .info, format: .json, descriptor: descriptor) }
        let harness = try TestServer(yaml: Self.yaml, logger: logger)

        try await Self.sendCut(harness.port, "/login?next=home", sent: #"{"user":"#, headers: [("X-Mishap-Session", "s1"), ("X-Test", "yes")])
        let entry = try #require(try await Self.entries(harness, count: 1).first)
        #expect(entry["method"] as? String == "POST")
        #expect(entry["path"] as? String == "/login")
        #expect(entry["query"] as? [[String]] == [["next", "home"]])
        #expect((entry["headers"] as? [[String]])?.contains(["X-Test", "yes"]) == true, "\(entry)")
        #expect(entry["body"] as? String == #"{"user":"#)
        #expect(entry["bodySize"] as? Int == 8)
        #expect(entry["bodyIncomplete"] as? Bool == true)
        #expect(entry["session"] as? String == "s1")
        #expect(entry["status"] is NSNull)
        #expect(entry["rule"] is NSNull)
        #expect(entry["closedEarly"] as? Bool == true)
        #expect(entry["durationMs"] as? Double != nil, "\(entry)")

        let line = try #require(LogPipe.object(pipe.nextLine()))
        #expect(line["message"] as? String == "POST /login")
        #expect(line["method"] as? String == "POST")
        #expect(line["path"] as? String == "/login")
        #expect(line["bodyIncomplete"] as? Bool == true)
        #expect(line["closedEarly"] as? Bool == true)
        #expect(line["status"] == nil)

        // A whole body: answered, and not marked.
        let answered = try await harness.send("POST", "/login", body: Data("{}".utf8))
        #expect(answered.text == "welcome")
        let whole = try #require(try await harness.journal().last)
        #expect(whole["bodyIncomplete"] == nil)
        #expect(whole["status"] as? Int == 200)
    }

    /// The case URLSession hits: the head and no body at all; a session given in the path.
    /// Journaled with the request log off too, and the text log line names method and path.
    @Test func noBodyAtAllWithTheSessionPrefix() async throws {
        let pipe = LogPipe()
        let descriptor = pipe.writeEnd
        let logger = Logger(label: "mishap") { LineLogHandler(label: $0, level: .info, format: .text, descriptor: descriptor) }
        let logged = try TestServer(yaml: Self.yaml, logger: logger)
        try await Self.sendCut(logged.port, "/__session/s2/login", sent: "")
        let entry = try #require(try await Self.entries(logged, count: 1).first)
        #expect(entry["path"] as? String == "/login")
        #expect(entry["session"] as? String == "s2")
        #expect(entry["body"] as? String == "")
        #expect(entry["bodyIncomplete"] as? Bool == true)
        let line = try #require(pipe.nextLine())
        #expect(line.contains(" info POST /__session/s2/login durationMs="), "\(line)")
        #expect(line.hasSuffix(" closedEarly=true bodyIncomplete=true"), "\(line)")

        let quiet = try TestServer(yaml: Self.yaml, options: ServiceOptions(logRequests: false))
        try await Self.sendCut(quiet.port, "/login", sent: "")
        let unlogged = try #require(try await Self.entries(quiet, count: 1).first)
        #expect(unlogged["method"] as? String == "POST" && unlogged["bodyIncomplete"] as? Bool == true, "\(unlogged)")
    }

    /// The request log's fast path writes `bodyIncomplete` as swift-log's path does.
    @Test(arguments: LineLogHandler.Format.allCases)
    func fastAndSwiftLogLinesAgree(format: LineLogHandler.Format) throws {
        let fastPipe = LogPipe(), slowPipe = LogPipe()
        let fastLogger = Logger(label: "mishap") { LineLogHandler(label: $0, level: .info, format: format, descriptor: fastPipe.writeEnd) }
        let slowLogger = Logger(label: "mishap") {
            MultiplexLogHandler([LineLogHandler(label: $0, level: .info, format: format, descriptor: slowPipe.writeEnd)])
        }
        let fast = try MishapService(source: .yaml(Self.yaml, name: "t.yaml"), logger: fastLogger)
        let slow = try MishapService(source: .yaml(Self.yaml, name: "t.yaml"), logger: slowLogger)
        var record = CompletedRequest(method: "POST", path: "/login", status: nil, rule: nil, endpoint: nil, fault: nil,
                                      duration: .milliseconds(30), completedNormally: false)
        record.bodyIncomplete = true
        fast.completed(record)
        slow.completed(record)
        fast.flushLog()
        let a = try #require(fastPipe.nextLine()), b = try #require(slowPipe.nextLine())
        let time = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/
        #expect(a.replacing(time, with: "T") == b.replacing(time, with: "T"))
        #expect(a.contains(format == .text ? "bodyIncomplete=true" : #""bodyIncomplete":true"#), "\(a)")
    }
}
