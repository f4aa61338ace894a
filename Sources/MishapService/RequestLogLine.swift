import MishapHTTP
import MishapSupport

/// One request's log line, written byte by byte into the log writer's buffer: no swift-log
/// metadata dictionary, no intermediate strings, no sorting. The result is exactly the line
/// `LineLogHandler` writes for the same message and metadata through swift-log (the service's
/// other path, for handlers of other kinds), which `LoggingTests` compare.
///
///     2026-11-21T09:30:12.345Z info GET /login status=200 rule=success endpoint="POST /login" durationMs=0.12
///     {"time":"...","level":"info","label":"mishap","message":"GET /login","method":"GET","path":"/login","status":200,...}
enum RequestLogLine {
    static func append(_ request: CompletedRequest, format: LineLogHandler.Format, label: String,
                       time: Int64, timestamps: inout TimestampCache, to out: inout [UInt8]) {
        let hundredths = durationHundredths(request.duration)
        switch format {
        case .text:
            timestamps.append(milliseconds: time, to: &out)
            out.append(contentsOf: " info ".utf8)
            out.append(contentsOf: request.method.utf8)
            out.append(UInt8(ascii: " "))
            out.append(contentsOf: request.path.utf8)
            if let status = request.status {
                out.append(contentsOf: " status=".utf8)
                appendDecimal(status, to: &out)
            } else if let fault = request.fault {
                textPair("fault", fault.rawValue, to: &out)
            }
            if let rule = request.rule { textPair("rule", rule, to: &out) }
            if let endpoint = request.endpoint { textPair("endpoint", endpoint, to: &out) }
            out.append(contentsOf: " durationMs=".utf8)
            appendHundredths(hundredths, to: &out)
            if !request.completedNormally { out.append(contentsOf: " closedEarly=true".utf8) }
            if let note = request.note { textPair("unmatched", note, to: &out) }
        case .json:
            out.append(contentsOf: #"{"time":""#.utf8)
            timestamps.append(milliseconds: time, to: &out)
            out.append(contentsOf: #"","level":"info","label":""#.utf8)
            JSONEscaping.appendEscaped(label, to: &out)
            out.append(contentsOf: #"","message":""#.utf8)
            JSONEscaping.appendEscaped(request.method, to: &out)
            out.append(UInt8(ascii: " "))
            JSONEscaping.appendEscaped(request.path, to: &out)
            out.append(UInt8(ascii: "\""))
            jsonPair("method", request.method, to: &out)
            jsonPair("path", request.path, to: &out)
            if let status = request.status {
                out.append(contentsOf: #","status":"#.utf8)
                appendDecimal(status, to: &out)
            } else if let fault = request.fault {
                jsonPair("fault", fault.rawValue, to: &out)
            }
            if let rule = request.rule { jsonPair("rule", rule, to: &out) }
            if let endpoint = request.endpoint { jsonPair("endpoint", endpoint, to: &out) }
            out.append(contentsOf: #","durationMs":"#.utf8)
            appendHundredths(hundredths, to: &out)
            if !request.completedNormally { out.append(contentsOf: #","closedEarly":true"#.utf8) }
            if let note = request.note { jsonPair("unmatched", note, to: &out) }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "\n"))
    }

    /// The duration in whole hundredths of a millisecond, rounded down (the log's resolution).
    static func durationHundredths(_ duration: Duration) -> Int {
        let milliseconds = Double(duration.components.attoseconds / 1_000_000_000_000) / 1000
            + Double(duration.components.seconds) * 1000
        return Int(milliseconds * 100)
    }

    /// `hundredths / 100` as Swift prints that `Double`: `0.05`, `0.5`, `1.0`, `12.34`.
    static func appendHundredths(_ hundredths: Int, to out: inout [UInt8]) {
        appendDecimal(hundredths / 100, to: &out)
        out.append(UInt8(ascii: "."))
        let fraction = hundredths % 100
        if fraction == 0 {
            out.append(UInt8(ascii: "0"))
        } else {
            out.append(UInt8(ascii: "0") + UInt8(fraction / 10))
            if fraction % 10 != 0 { out.append(UInt8(ascii: "0") + UInt8(fraction % 10)) }
        }
    }

    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 0 {
            out.append(UInt8(ascii: "-"))
            appendDecimal(-value, to: &out)
            return
        }
        if value >= 10 { appendDecimal(value / 10, to: &out) }
        out.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// ` key=value`, the value in quotes when it is empty or holds a space, as `LineLogHandler` writes it.
    private static func textPair(_ key: StaticString, _ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        out.append(UInt8(ascii: "="))
        let quoted = value.isEmpty || value.utf8.contains(UInt8(ascii: " "))
        if quoted { out.append(UInt8(ascii: "\"")) }
        out.append(contentsOf: value.utf8)
        if quoted { out.append(UInt8(ascii: "\"")) }
    }

    /// `,"key":"value"`.
    private static func jsonPair(_ key: StaticString, _ value: String, to out: inout [UInt8]) {
        out.append(contentsOf: #",""#.utf8)
        out.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        out.append(contentsOf: #"":""#.utf8)
        JSONEscaping.appendEscaped(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }
}
