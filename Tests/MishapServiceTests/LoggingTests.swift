import Foundation
import Logging
import MishapService
import MishapTestSupport
import Testing

/// `LineLogHandler` (one line per message, text or JSON) and the request log the service
/// writes through it.
@Suite(.onBlockingThreads) struct LoggingTests {
    func logger(_ pipe: LogPipe, _ format: LineLogHandler.Format, level: Logger.Level = .info, label: String = "test") -> Logger {
        let descriptor = pipe.writeEnd
        return Logger(label: label) { label in LineLogHandler(label: label, level: level, format: format, descriptor: descriptor) }
    }

    /// JSON format: each message is one line holding one JSON object with time, level, label,
    /// message and the metadata, numbers given as `.stringConvertible` Int or Double written as
    /// JSON numbers; quotes and line breaks in a message stay inside its line; messages below
    /// the level are not written.
    @Test func jsonLines() throws {
        let pipe = LogPipe()
        var log = logger(pipe, .json)
        log[metadataKey: "instance"] = "one"
        log.info("GET /x", metadata: ["method": "GET", "path": "/x", "status": .stringConvertible(200),
                                     "durationMs": .stringConvertible(12.5), "note": "two words",
                                     "tags": ["a", "b"], "extra": ["k": "v"]])
        log.debug("not shown")
        log.warning("line one\nline \"two\"")

        let first = try #require(pipe.nextLine())
        #expect(first.hasPrefix(#"{"time":""#))
        let object = try #require(LogPipe.object(first), "not a JSON object: \(first)")
        let time = try #require(object["time"] as? String)
        #expect(time.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
        #expect(object["level"] as? String == "info")
        #expect(object["label"] as? String == "test")
        #expect(object["message"] as? String == "GET /x")
        #expect(object["method"] as? String == "GET")
        #expect(object["path"] as? String == "/x")
        #expect(object["status"] as? Int == 200)
        #expect(!(object["status"] is String))
        #expect(object["durationMs"] as? Double == 12.5)
        #expect(!(object["durationMs"] is String))
        #expect(object["note"] as? String == "two words")
        #expect(object["instance"] as? String == "one")
        #expect(object["tags"] as? [String] == ["a", "b"])
        #expect(object["extra"] as? [String: String] == ["k": "v"])
        // Request fields come first, in reading order.
        let keys = ["method", "path", "status", "durationMs", "extra"].map { first.range(of: "\"\($0)\":")!.lowerBound }
        #expect(keys == keys.sorted())

        let second = try #require(LogPipe.object(pipe.nextLine()))
        #expect(second["level"] as? String == "warning")
        #expect(second["message"] as? String == "line one\nline \"two\"")
        #expect(pipe.nextLine(timeout: .milliseconds(100)) == nil)
    }

    /// Text format: time, level, message, then `key=value` pairs, values with spaces quoted. A
    /// request line's method and path are already its message, so they are not repeated.
    @Test func textLines() throws {
        let pipe = LogPipe()
        let log = logger(pipe, .text)
        log.info("GET /x", metadata: ["method": "GET", "path": "/x", "status": .stringConvertible(200),
                                     "rule": "ok", "note": "two words", "empty": ""])
        log.info("hello", metadata: ["method": "GET"])

        let first = try #require(pipe.nextLine())
        let match = try #require(first.wholeMatch(of: /(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) info GET \/x (.*)/),
                                 "unexpected line: \(first)")
        #expect(match.2 == #"status=200 rule=ok empty="" note="two words""#)
        #expect(!first.contains("method="))
        #expect(!first.contains("path="))

        let second = try #require(pipe.nextLine())
        #expect(second.hasSuffix(" info hello method=GET"))
    }

    static let yaml = """
        endpoints:
          - endpoint: GET /hello
            rules:
              - name: hello
                respond: { status: 201, text: hi }
          - endpoint: GET /broken
            rules:
              - name: broken
                respond: { fault: close }
        """

    /// The service logs one line per request when the server is done with it: method, path,
    /// status (a number) and the rule and endpoint that answered, and its duration; a request
    /// no endpoint matched has no rule; a fault is logged instead of a status.
    @Test func requestLog() async throws {
        let pipe = LogPipe()
        let harness = try TestServer(yaml: Self.yaml, logger: logger(pipe, .json, label: "mishap"))

        #expect(try await harness.get("/hello?x=1").status == 201)
        let hello = try #require(LogPipe.object(pipe.nextLine()))
        #expect(hello["level"] as? String == "info")
        #expect(hello["label"] as? String == "mishap")
        #expect(hello["message"] as? String == "GET /hello")
        #expect(hello["method"] as? String == "GET")
        #expect(hello["path"] as? String == "/hello")
        #expect(hello["status"] as? Int == 201)
        #expect(hello["rule"] as? String == "hello")
        #expect(hello["endpoint"] as? String == "GET /hello")
        let duration = try #require(hello["durationMs"] as? Double)
        #expect(duration >= 0 && duration < 5000)
        #expect(hello["closedEarly"] == nil)

        #expect(try await harness.get("/missing").status == 404)
        let missing = try #require(LogPipe.object(pipe.nextLine()))
        #expect(missing["path"] as? String == "/missing")
        #expect(missing["status"] as? Int == 404)
        #expect(missing["rule"] == nil)
        #expect(missing["endpoint"] == nil)
        #expect(missing["unmatched"] as? String == "no endpoint has this path", "\(missing)")

        #expect(try await harness.get("/helo").status == 404)
        let typo = try #require(LogPipe.object(pipe.nextLine()))
        #expect(typo["unmatched"] as? String == "nearest: GET /hello: no endpoint has the path /helo; did you mean /hello?", "\(typo)")

        let port = harness.port
        _ = try await onOwnThread {
            let connection = try RawHTTPConnection(port: port)
            try connection.sendRequest("GET", "/broken")
            return try connection.readUntilEnd().bytes
        }
        let broken = try #require(LogPipe.object(pipe.nextLine()))
        #expect(broken["path"] as? String == "/broken")
        #expect(broken["status"] == nil)
        #expect(broken["fault"] as? String == "close")
        #expect(broken["rule"] as? String == "broken")

        // An admin call that only reads (a dashboard polls every second) is logged at debug,
        // not at info; one that changes something is logged.
        _ = try await harness.admin("health")
        _ = try await harness.admin("reset", method: "POST")
        let admin = try #require(LogPipe.object(pipe.nextLine()))
        #expect(admin["path"] as? String == "/__mishap/reset")
        #expect(admin["method"] as? String == "POST")
        #expect(admin["status"] as? Int == 200)

        // One line per request: nothing more.
        #expect(pipe.nextLine(timeout: .milliseconds(200)) == nil)
    }

    /// `logRequests: false`, or a level above info, writes no request lines.
    @Test func requestLogOff() async throws {
        let quietPipe = LogPipe(), warningPipe = LogPipe()
        let quiet = try TestServer(yaml: Self.yaml, options: ServiceOptions(logRequests: false),
                                       logger: logger(quietPipe, .json))
        let warning = try TestServer(yaml: Self.yaml, logger: logger(warningPipe, .json, level: .warning))
        #expect(try await quiet.get("/hello").status == 201)
        #expect(try await warning.get("/hello").status == 201)
        #expect(quietPipe.nextLine(timeout: .milliseconds(200)) == nil)
        #expect(warningPipe.nextLine(timeout: .milliseconds(50)) == nil)
    }

    /// At debug, admin calls that only read are logged too.
    @Test func adminReadsAtDebug() async throws {
        let pipe = LogPipe()
        let harness = try TestServer(yaml: Self.yaml, logger: logger(pipe, .json, level: .debug))
        _ = try await harness.admin("health")
        var found = false
        while let line = pipe.nextLine(timeout: .milliseconds(500)) {
            if let object = LogPipe.object(line), object["path"] as? String == "/__mishap/health" {
                #expect(object["status"] as? Int == 200)
                found = true
                break
            }
        }
        #expect(found, "no line for GET /__mishap/health at debug")
    }
}
