import MishapEngine
import MishapHTTP
import MishapSupport

/// The journal's entries as `GET /__mishap/requests` answers them: JSON written straight into
/// the answer's bytes, entry by entry (no tree of values, no string of the whole), and no more
/// than `byteBudget` of it, whatever the journal holds. When the entries asked for do not fit,
/// the answer ends with the last that does and says so: `"truncated": true` and `"next": ID`,
/// the `after` that reads the rest. Each body is shown whole (as the journal keeps it) or, with
/// `bodyBytes`, cut to that many bytes (at a character boundary for text).
struct JournalListing {
    /// The most bytes of JSON one answer holds (about: the few fields after the entries are
    /// not counted); an entry alone larger than it is still sent, alone, so paging moves on.
    static let byteBudget = 4 << 20

    /// The entries to show, oldest first.
    let entries: [JournalEntry]
    let capacity: Int
    let dropped: Int
    let resets: Int
    /// Each body cut to this many bytes; nil: as the journal keeps it.
    let bodyBytes: Int?
    /// The most bytes of entries (`byteBudget`, smaller in tests).
    var budget = JournalListing.byteBudget

    /// The answer's JSON.
    func json() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(min(budget, entries.count * 1024) + 256)
        out += Array(#"{"requests":["#.utf8)
        var next: UInt64?
        for (index, entry) in entries.enumerated() {
            let start = out.count
            if index > 0 { out.append(UInt8(ascii: ",")) }
            write(entry, to: &out)
            if out.count > budget && index > 0 {
                out.removeSubrange(start...)
                next = entries[index - 1].id
                break
            }
        }
        out += Array(#"],"capacity":"#.utf8) + Array(String(capacity).utf8)
        out += Array(#","dropped":"#.utf8) + Array(String(dropped).utf8)
        out += Array(#","resets":"#.utf8) + Array(String(resets).utf8)
        if let next {
            out += Array(#","truncated":true,"next":"#.utf8) + Array(String(next).utf8)
        } else {
            out += Array(#","truncated":false"#.utf8)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// One entry as an object, its fields in the order the API documents.
    private func write(_ entry: JournalEntry, to out: inout [UInt8]) {
        var json = JSONWriter()
        swap(&json.out, &out)  // Moved, not copied: the answer's bytes are written in place.
        defer { swap(&json.out, &out) }
        json.open()
        json.field("id", Int(entry.id))
        json.field("time", WallClock.iso8601(milliseconds: entry.time))
        json.field("method", entry.method)
        json.field("path", entry.path)
        json.pairs("query", entry.query)
        json.pairs("headers", entry.headers)
        var shown = entry.body.count
        if let bodyBytes, bodyBytes < shown {
            shown = bodyBytes
            // A cut inside a character would make text look binary: back to its first byte
            // (at most 3 back: a character has at most 3 continuation bytes).
            var steps = 0
            while steps < 3 && shown > 0 && entry.body[shown] & 0xC0 == 0x80 {
                shown -= 1
                steps += 1
            }
        }
        if let text = String(validUTF8: entry.body[..<shown]) {
            json.field("body", text)
        } else {
            json.field("bodyBase64", Base64.encode(Array(entry.body[..<shown])))
        }
        json.field("bodySize", entry.bodySize)
        json.field("bodyTruncated", shown < entry.bodySize)
        json.field("session", entry.session)
        json.field("endpoint", entry.endpoint)
        json.field("rule", entry.rule)
        json.field("status", entry.status)
        json.field("fault", entry.fault?.rawValue)
        json.field("delayMs", entry.delayMilliseconds)
        json.field("hang", entry.hang)
        json.raw("stateChanges", JSON.array(entry.stateChanges.map(AdminAPI.json(for:))).text)
        json.field("runtimeRule", entry.runtimeRule)
        // In hundredths of a millisecond, as the request log writes it.
        json.raw("durationMs", entry.durationNanoseconds.map { String(Double($0 / 10_000) / 100) } ?? "null")
        json.field("closedEarly", entry.closedEarly)
        if entry.bodyIncomplete { json.field("bodyIncomplete", true) }
        if let upstream = entry.upstream {
            json.field("upstream", upstream)
            json.raw("upstreamMs", entry.upstreamMilliseconds.map { JSON.double(($0 * 100).rounded() / 100).text } ?? "null")
            json.field("upstreamNote", entry.upstreamNote)
        }
        if let network = entry.network { json.raw("network", Self.json(for: network).text) }
        if let range = entry.range { json.raw("range", Self.json(for: range).text) }
        if let stream = entry.eventStream { json.raw("eventStream", Self.json(for: stream).text) }
        if let resumed = entry.resumesStream { json.field("resumesStream", Int(resumed)) }
        if let socket = entry.webSocket { json.raw("webSocket", Self.json(for: socket).text) }
        if let problems = entry.contractProblems { json.raw("contractProblems", JSON.array(problems.map(JSON.string)).text) }
        json.close()
    }

    /// What a stream of events sent, as the journal shows it.
    static func json(for stream: EventStreamRecord) -> JSON {
        var members: [(String, JSON)] = [("events", .int(stream.events)), ("over", .bool(stream.over))]
        members.append(("lastEventId", stream.lastEventID.map { .string($0) } ?? .null))
        members.append(("retryMs", stream.retryMilliseconds.map { .int($0) } ?? .null))
        members.append(("ending", stream.ending.map { .string($0) } ?? .null))
        return .object(members)
    }

    /// What passed on a WebSocket, as the journal shows it: a text message's start as text (cut
    /// at a whole character), any other's as base64.
    static func json(for socket: WebSocketRecord) -> JSON {
        let messages = socket.messages.map { message -> JSON in
            var members: [(String, JSON)] = [
                ("time", .string(WallClock.iso8601(milliseconds: message.time))), ("direction", .string(message.direction)), ("kind", .string(message.kind)),
                ("size", .int(message.size)),
            ]
            var kept = message.payload
            if message.kind == "text" || message.kind == "close" {
                // A close frame's reason after its two-byte code; a cut character is left out.
                let start = message.kind == "close" ? min(2, kept.count) : 0
                if message.kind == "close" {
                    members.append(("code", kept.count >= 2 ? .int(Int(kept[0]) << 8 | Int(kept[1])) : .null))
                }
                var text = Array(kept[start...])
                var trimmed = 0
                while trimmed < 4, !text.isEmpty, String(validating: text, as: UTF8.self) == nil {
                    text.removeLast()
                    trimmed += 1
                }
                kept = text
                members.append(("text", .string(String(decoding: text, as: UTF8.self))))
                members.append(("truncated", .bool(start + kept.count < message.size)))
            } else {
                members.append(("base64", .string(Base64.encode(kept))))
                members.append(("truncated", .bool(kept.count < message.size)))
            }
            return .object(members)
        }
        var members: [(String, JSON)] = [
            ("sent", .int(socket.sent)), ("received", .int(socket.received)), ("over", .bool(socket.ending != nil)),
            ("messages", .array(messages)),
        ]
        if let ending = socket.ending {
            var how: [(String, JSON)] = [("how", .string(ending.how.rawValue))]
            if let by = ending.by { how.append(("by", .string(by))) }
            if let code = ending.code { how.append(("code", .int(code))) }
            if let reason = ending.reason { how.append(("reason", .string(reason))) }
            members.append(("ending", .object(how)))
        } else {
            members.append(("ending", .null))
        }
        return .object(members)
    }

    /// What `ranges:` made of a request, as the journal shows it.
    static func json(for range: RangeOutcome) -> JSON {
        var members: [(String, JSON)] = [
            ("asked", .optional(range.asked)), ("ifRange", .optional(range.ifRange)),
            ("status", .int(range.status)), ("contentRange", .optional(range.contentRange)),
            ("etag", .string(range.etag)),
        ]
        if let fault = range.fault { members.append(("fault", .string(fault.rawValue))) }
        if let cut = range.cutAfterBytes { members.append((range.cutCloses ? "closeAfterBytes" : "resetAfterBytes", .int(cut))) }
        return .object(members)
    }

    /// What a network profile did to an answer, as the journal shows it.
    static func json(for network: NetworkShaping) -> JSON {
        var members: [(String, JSON)] = [("profile", .string(network.profile)), ("latencyMs", .int(network.addedLatencyMilliseconds))]
        if let rate = network.downBytesPerSecond { members.append(("downBytesPerSecond", .int(rate))) }
        switch network.resetAfter {
        case .bytes(let count)?: members.append(("resetAfterBytes", .int(count)))
        case .fraction(let fraction)?: members.append(("resetAfterFraction", .double(fraction)))
        case nil: break
        }
        if network.slowCloseMilliseconds > 0 { members.append(("slowCloseMs", .int(network.slowCloseMilliseconds))) }
        if let reason = network.resetReason { members.append(("reset", .string(reason))) }
        return .object(members)
    }
}

/// Writes one JSON object's fields into bytes, as `JSON.text` would write them.
private struct JSONWriter {
    var out: [UInt8] = []
    private var first = true

    mutating func open() { out.append(UInt8(ascii: "{")) }
    mutating func close() { out.append(UInt8(ascii: "}")) }

    /// `"name":` after a comma when it is not the first.
    private mutating func key(_ name: StaticString) {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out += [UInt8(ascii: "\""), UInt8(ascii: ":")]
    }

    private mutating func string(_ text: String) {
        out.append(UInt8(ascii: "\""))
        JSONEscaping.appendEscaped(text, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    mutating func field(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { string(value) } else { out += Array("null".utf8) }
    }

    mutating func field(_ name: StaticString, _ value: Int?) {
        key(name)
        out += Array((value.map(String.init) ?? "null").utf8)
    }

    mutating func field(_ name: StaticString, _ value: Bool) {
        key(name)
        out += Array((value ? "true" : "false").utf8)
    }

    /// `[[name, value], ...]`.
    mutating func pairs(_ name: StaticString, _ fields: [Field]) {
        key(name)
        out.append(UInt8(ascii: "["))
        for (index, field) in fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "["))
            string(field.name)
            out.append(UInt8(ascii: ","))
            string(field.value)
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "]"))
    }

    /// A value already written as JSON text.
    mutating func raw(_ name: StaticString, _ text: String) {
        key(name)
        out += Array(text.utf8)
    }
}
