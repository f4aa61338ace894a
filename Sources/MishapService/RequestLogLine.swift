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
        let hundredths = request.durationHundredthsOfMillisecond
        switch format {
        case .text:
            timestamps.append(milliseconds: time, to: &out)
            appendStatic(" info ", to: &out)
            appendUTF8(request.method, to: &out)
            out.append(UInt8(ascii: " "))
            appendUTF8(request.path, to: &out)
            if let status = request.status {
                appendStatic(" status=", to: &out)
                appendDecimal(status, to: &out)
            } else if let fault = request.fault {
                textPair("fault", fault.rawValue, to: &out)
            }
            if let rule = request.rule { textPair("rule", rule, to: &out) }
            if let endpoint = request.endpoint { textPair("endpoint", endpoint, to: &out) }
            appendStatic(" durationMs=", to: &out)
            appendHundredths(hundredths, to: &out)
            if !request.completedNormally { appendStatic(" closedEarly=true", to: &out) }
            if let note = request.note { textPair("unmatched", note, to: &out) }
        case .json:
            appendStatic(#"{"time":""#, to: &out)
            timestamps.append(milliseconds: time, to: &out)
            appendStatic(#"","level":"info","label":""#, to: &out)
            JSONEscaping.appendEscaped(label, to: &out)
            appendStatic(#"","message":""#, to: &out)
            JSONEscaping.appendEscaped(request.method, to: &out)
            out.append(UInt8(ascii: " "))
            JSONEscaping.appendEscaped(request.path, to: &out)
            out.append(UInt8(ascii: "\""))
            jsonPair("method", request.method, to: &out)
            jsonPair("path", request.path, to: &out)
            if let status = request.status {
                appendStatic(#","status":"#, to: &out)
                appendDecimal(status, to: &out)
            } else if let fault = request.fault {
                jsonPair("fault", fault.rawValue, to: &out)
            }
            if let rule = request.rule { jsonPair("rule", rule, to: &out) }
            if let endpoint = request.endpoint { jsonPair("endpoint", endpoint, to: &out) }
            appendStatic(#","durationMs":"#, to: &out)
            appendHundredths(hundredths, to: &out)
            if !request.completedNormally { appendStatic(#","closedEarly":true"#, to: &out) }
            if let note = request.note { jsonPair("unmatched", note, to: &out) }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "\n"))
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

    /// The string's bytes, copied at once from its contiguous storage (`append(contentsOf:
    /// string.utf8)` goes through the string's generic copying path, several times slower for
    /// the few dozen bytes of a log field).
    static func appendUTF8(_ string: String, to out: inout [UInt8]) {
        withUTF8(of: string) { out.append(contentsOf: $0) }
    }

    /// Calls `body` with the string's UTF-8 bytes: its own storage when contiguous (native
    /// strings always are), without copying the string as `withUTF8` (mutating) would.
    static func withUTF8(of string: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        if string.utf8.withContiguousStorageIfAvailable(body) == nil {
            Array(string.utf8).withUnsafeBufferPointer(body)
        }
    }

    /// A literal's bytes.
    static func appendStatic(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// ` key=value`, the value in quotes when it is empty or holds a space, as `LineLogHandler` writes it.
    private static func textPair(_ key: StaticString, _ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: " "))
        appendStatic(key, to: &out)
        out.append(UInt8(ascii: "="))
        withUTF8(of: value) { bytes in
            let quoted = bytes.isEmpty || memchr(bytes.baseAddress!, Int32(UInt8(ascii: " ")), bytes.count) != nil
            if quoted { out.append(UInt8(ascii: "\"")) }
            out.append(contentsOf: bytes)
            if quoted { out.append(UInt8(ascii: "\"")) }
        }
    }

    /// `,"key":"value"`.
    private static func jsonPair(_ key: StaticString, _ value: String, to out: inout [UInt8]) {
        appendStatic(#",""#, to: &out)
        appendStatic(key, to: &out)
        appendStatic(#"":""#, to: &out)
        JSONEscaping.appendEscaped(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }
}
