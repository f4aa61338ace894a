import Foundation
import Logging
import MishapHTTP
import MishapService
import MishapTestSupport
import Testing

/// A line break in a request's path (decoded from `%0D%0A`), a rule's name or any logged text
/// never starts a line of its own in the text log: control characters are escaped there as the
/// JSON log escapes them, so no request can forge a log line.
@Suite(.onBlockingThreads) struct LogInjectionTests {
    /// The forged line a hostile path or name tries to add.
    static let forged = "2026-01-01T00:00:00.000Z error forged"

    static let yaml = """
        endpoints:
          - endpoint: GET /x
            rules:
              - name: "ok\\r\\n\(forged)"
                respond: { text: ok }
        """

    func textLogger(_ pipe: LogPipe) -> Logger {
        let descriptor = pipe.writeEnd
        return Logger(label: "mishap") { LineLogHandler(label: $0, level: .info, format: .text, descriptor: descriptor) }
    }

    /// Every line the pipe holds, until none arrives for a while.
    func lines(_ pipe: LogPipe) -> [String] {
        var lines: [String] = []
        while let line = pipe.nextLine(timeout: .milliseconds(300)) { lines.append(line) }
        return lines
    }

    /// A path with `%0D%0A` and a rule name with CR/LF, over a real socket: one line each, the
    /// breaks written `\r\n`, and no line that starts as the forged one.
    @Test func requestLinesEscapeLineBreaks() async throws {
        let pipe = LogPipe()
        let harness = try TestServer(yaml: Self.yaml, logger: textLogger(pipe))
        let port = harness.port
        let target = "/x%0D%0A" + Self.forged.replacingOccurrences(of: " ", with: "%20")
        _ = try await onOwnThread {
            let connection = try RawHTTPConnection(port: port)
            defer { connection.close() }
            try connection.sendRequest("GET", target, headers: [("Connection", "close")])
            return try connection.readToEnd()
        }
        #expect(try await harness.get("/x").status == 200)
        harness.service.flushLog()
        let written = lines(pipe)
        #expect(written.count == 2, "\(written)")
        #expect(!written.contains { $0.hasPrefix(Self.forged) }, "\(written)")
        #expect(written.first?.contains(#" info GET /x\r\n2026-01-01T00:00:00.000Z error forged "#) == true, "\(written)")
        #expect(written.last?.contains(#" rule="ok\r\n2026-01-01T00:00:00.000Z error forged" "#) == true, "\(written)")
    }

    /// Lines through swift-log: the message, a metadata value and a located problem's message
    /// with line breaks, a tab, an escape character, U+2028 and a backslash each stay on their
    /// line, written as JSON writes them (the backslash doubled, so an escape is never text).
    @Test func swiftLogLinesEscapeControlCharacters() throws {
        let pipe = LogPipe()
        let log = textLogger(pipe)
        log.warning("one\ntwo", metadata: ["value": "a\rb\tc\u{1B}[31md\u{2028}e\\f"])
        log.error("reload failed", metadata: [LineLogHandler.problemsKey: .array([
            .dictionary(["file": "a\nb.yaml", "line": .stringConvertible(1), "column": .stringConvertible(2),
                         "message": .string("rule 'x\n\(Self.forged)' is bad")]),
        ])])
        let written = lines(pipe)
        #expect(written.count == 3, "\(written)")
        #expect(written.first?.hasSuffix(#" warning one\ntwo value=a\rb\tc\u001b[31md\u2028e\\f"#) == true, "\(written)")
        #expect(written.last == #"a\nb.yaml:1:2: rule 'x\n2026-01-01T00:00:00.000Z error forged' is bad"#, "\(written)")
    }

    /// The request log's fast path writes the same escaped line as swift-log's path, in text
    /// and JSON (which escapes as it always has).
    @Test(arguments: LineLogHandler.Format.allCases)
    func fastAndSwiftLogLinesAgree(format: LineLogHandler.Format) throws {
        let fastPipe = LogPipe(), slowPipe = LogPipe()
        let fastLogger = Logger(label: "mishap") { LineLogHandler(label: $0, level: .info, format: format, descriptor: fastPipe.writeEnd) }
        let slowLogger = Logger(label: "mishap") {
            MultiplexLogHandler([LineLogHandler(label: $0, level: .info, format: format, descriptor: slowPipe.writeEnd)])
        }
        let yaml = "endpoint: GET /x\nrules:\n  - name: ok\n    respond: { text: ok }\n"
        let fast = try MishapService(source: .yaml(yaml, name: "t.yaml"), logger: fastLogger)
        let slow = try MishapService(source: .yaml(yaml, name: "t.yaml"), logger: slowLogger)
        let request = CompletedRequest(method: "GET", path: "/a\r\n\(Self.forged)\\\u{7F}\u{2029}", status: 404,
                                       rule: "r\n x", endpoint: "GET /a\u{0}b", fault: nil, duration: .milliseconds(1),
                                       completedNormally: true, note: "no\tendpoint")
        fast.completed(request)
        slow.completed(request)
        fast.flushLog()
        let a = try #require(fastPipe.nextLine()), b = try #require(slowPipe.nextLine())
        let time = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/
        #expect(a.replacing(time, with: "T") == b.replacing(time, with: "T"))
        #expect(fastPipe.nextLine(timeout: .milliseconds(100)) == nil)
        #expect(slowPipe.nextLine(timeout: .milliseconds(100)) == nil)
        if format == .text {
            let expected = #" info GET /a\r\n2026-01-01T00:00:00.000Z error forged\\\u007f\u2029 status=404 rule="r\n x" "#
                + #"endpoint="GET /a\u0000b" durationMs=1.0 unmatched=no\tendpoint"#
            #expect(a.hasSuffix(expected), "\(a)")
        }
    }
}
