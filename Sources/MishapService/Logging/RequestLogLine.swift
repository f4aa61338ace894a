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
            // Written by pointer into one buffer sized for the line, then appended to the log's
            // buffer at once: each append to an array costs about 90 instructions, and a line
            // has a dozen pieces.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: textBound(request)) { buffer in
                let start = buffer.baseAddress!
                var line = LineCursor(at: start)
                line.at += timestamps.write(milliseconds: time, to: line.at)
                line.literal(" info ")
                // Escaped: a path decoded from `%0D%0A` or a rule name with a line break must
                // not start a line of its own.
                line.escapedText(request.method)
                line.byte(UInt8(ascii: " "))
                line.escapedText(request.path)
                if let status = request.status {
                    line.literal(" status=")
                    line.decimal(status)
                } else if let fault = request.fault {
                    line.pair(" fault=", fault.rawValue)
                }
                if let rule = request.rule { line.escapedPair(" rule=", rule) }
                if let endpoint = request.endpoint { line.escapedPair(" endpoint=", endpoint) }
                line.literal(" durationMs=")
                line.hundredths(hundredths)
                if !request.completedNormally { line.literal(" closedEarly=true") }
                if request.bodyIncomplete { line.literal(" bodyIncomplete=true") }
                if let note = request.note { line.escapedPair(" unmatched=", note) }
                if let upstream = request.upstream { line.escapedPair(" upstream=", upstream) }
                line.byte(UInt8(ascii: "\n"))
                out.append(contentsOf: UnsafeBufferPointer(start: start, count: line.at - start))
            }
            return
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
            if request.bodyIncomplete { appendStatic(#","bodyIncomplete":true"#, to: &out) }
            if let note = request.note { jsonPair("unmatched", note, to: &out) }
            if let upstream = request.upstream { jsonPair("upstream", upstream, to: &out) }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "\n"))
    }

    /// The most bytes the text line of `request` takes: its fields, each as if every byte were
    /// escaped (six bytes at most, `TextLogEscaping`), and room to spare for the rest (the time,
    /// the keys, numbers of at most 20 digits, quotes). Worked out from the counts alone: scanning
    /// each field here for what needs escaping, and again as it is written, cost about 1,800
    /// instructions a line; the room is on the stack, and costs nothing to leave unused.
    static func textBound(_ request: CompletedRequest) -> Int {
        let fields = request.method.utf8.count + request.path.utf8.count + (request.rule?.utf8.count ?? 0)
            + (request.endpoint?.utf8.count ?? 0) + (request.note?.utf8.count ?? 0) + (request.upstream?.utf8.count ?? 0)
        return 256 + fields * TextLogEscaping.longestEscape + (request.fault?.rawValue.utf8.count ?? 0)
    }

    /// `hundredths / 100` as Swift prints that `Double`: `0.05`, `0.5`, `1.0`, `12.34`.
    static func appendHundredths(_ hundredths: Int, to out: inout [UInt8]) {
        appendWritten(to: &out) { $0.hundredths(hundredths) }
    }

    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        appendWritten(to: &out) { $0.decimal(value) }
    }

    /// Appends what `write` writes, at most 48 bytes (a number).
    private static func appendWritten(to out: inout [UInt8], _ write: (inout LineCursor) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 48) { buffer in
            let start = buffer.baseAddress!
            var cursor = LineCursor(at: start)
            write(&cursor)
            out.append(contentsOf: UnsafeBufferPointer(start: start, count: cursor.at - start))
        }
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

    /// `,"key":"value"`.
    private static func jsonPair(_ key: StaticString, _ value: String, to out: inout [UInt8]) {
        appendStatic(#",""#, to: &out)
        appendStatic(key, to: &out)
        appendStatic(#"":""#, to: &out)
        JSONEscaping.appendEscaped(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }
}
