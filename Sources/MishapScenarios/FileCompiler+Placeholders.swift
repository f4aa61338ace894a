import MishapEngine

// `{{placeholders}}` in response bodies and header values: the request values they stand for,
// checked when the file loads and filled in for each request.
extension FileCompiler {
    /// Splits `text` at its `{{placeholders}}`.
    mutating func template(_ text: String, escaping: Template.Escaping, at node: YAMLNode) -> Template? {
        guard let parts = placeholderParts(text, at: node) else { return nil }
        return Template(segments: parts.map { part in
            switch part {
            case .text(let text): return .literal(Array(text.utf8))
            case .value(let source): return .value(source)
            }
        }, escaping: escaping)
    }

    enum TextPart {
        case text(String)
        case value(ValueSource)
    }

    static let placeholderRoots = ["query", "headers", "body", "path", "request", "now", "state", "random"]
    /// The most hex digits `random.hex.N` gives.
    static let maximumHexDigits = 256

    /// The literal text and placeholders of `text`, in order. One pass over the bytes: the
    /// braces are ASCII, so the text between them is whole UTF-8.
    mutating func placeholderParts(_ text: String, at node: YAMLNode) -> [TextPart]? {
        let bytes = Array(text.utf8)
        func pair(_ brace: UInt8, from start: Int) -> Int? {
            var index = start
            while index + 1 < bytes.count {
                if bytes[index] == brace && bytes[index + 1] == brace { return index }
                index += 1
            }
            return nil
        }
        var parts: [TextPart] = []
        var rest = 0
        while let open = pair(UInt8(ascii: "{"), from: rest) {
            parts.append(.text(String(decoding: bytes[rest..<open], as: UTF8.self)))
            guard let close = pair(UInt8(ascii: "}"), from: open + 2) else {
                error("unclosed placeholder: '{{' without '}}'", at: node)
                return nil
            }
            // The name without the spaces around it, as in `{{ query.userName }}`.
            var first = open + 2, last = close
            while first < last, bytes[first] == UInt8(ascii: " ") { first += 1 }
            while last > first, bytes[last - 1] == UInt8(ascii: " ") { last -= 1 }
            let name = String(decoding: bytes[first..<last], as: UTF8.self)
            guard let source = valueSource(placeholder: name, at: node) else { return nil }
            parts.append(.value(source))
            rest = close + 2
        }
        parts.append(.text(String(decoding: bytes[rest...], as: UTF8.self)))
        return parts
    }

    private mutating func valueSource(placeholder name: String, at node: YAMLNode) -> ValueSource? {
        let pieces = name.split(separator: ".", maxSplits: 1).map(String.init)
        let root = pieces.first ?? ""
        let rest = pieces.count > 1 ? pieces[1] : ""
        switch root {
        case "query" where !rest.isEmpty: return .query(rest)
        case "headers" where !rest.isEmpty, "header" where !rest.isEmpty: return .header(rest)
        case "body" where !rest.isEmpty: return .body(rest.split(separator: ".", omittingEmptySubsequences: false).map(String.init))
        case "path" where !rest.isEmpty: return .pathParameter(rest)
        case "request" where rest == "method": return .method
        case "request" where rest == "path": return .path
        case "state" where !rest.isEmpty:
            guard let declared = declaredState(rest, at: node) else { return nil }
            return .state(name: rest, slot: declared.slot)
        case "random" where rest == "uuid": return .uuid
        case "random" where rest == "hex": return .hex(digits: 32)
        case "random" where rest.hasPrefix("hex."):
            if let digits = Int(rest.dropFirst(4)), (1...Self.maximumHexDigits).contains(digits) { return .hex(digits: digits) }
            error("'{{\(shown(name))}}': random.hex.N gives N hex digits, N from 1 to \(Self.maximumHexDigits)", at: node)
            return nil
        case "random":
            error("unknown placeholder '{{\(shown(name))}}'; random values are random.uuid, random.hex (32 digits) and random.hex.N", at: node)
            return nil
        case _ where root == "now" || root.hasPrefix("now+") || root.hasPrefix("now-"):
            var seconds = 0
            if root != "now" {
                let offset = root.dropFirst(3)
                // `magnitude`, not `abs`: abs(Int.min) traps.
                guard offset.hasSuffix("s"), let value = Int(offset.dropLast()), value.magnitude <= 10 * 365 * 86_400 else {
                    error("'{{\(shown(name))}}' must be now, now+SECONDSs or now-SECONDSs, like {{now+30s}}, optionally with .iso8601 or .epoch", at: node)
                    return nil
                }
                seconds = value
            }
            switch rest {
            case "" where pieces.count == 1, "http": return .httpDate(offsetSeconds: seconds)
            case "iso8601": return .time(offsetSeconds: seconds, format: .iso8601)
            case "epoch": return .time(offsetSeconds: seconds, format: .epoch)
            default:
                error("'{{\(shown(name))}}': a time is written as an HTTP-date (now+60s), now+60s.iso8601 or now+60s.epoch", at: node)
                return nil
            }
        default:
            let suggestion = Self.placeholderRoots.contains(root) ? "" : hint(for: root, in: Self.placeholderRoots)
            error("unknown placeholder '{{\(shown(name))}}'\(suggestion); use query.NAME, headers.NAME, body.FIELD, path.NAME, request.method, request.path, state.NAME, random.uuid, random.hex, now, now+30s or now+30s.iso8601", at: node)
            return nil
        }
    }
}

extension String {
    /// Whether the text holds `{{`, found as `placeholderParts` finds it: byte by byte.
    /// `contains("{{")` compared characters through the string-processing library, 7,000
    /// instructions a call, and would not see a `{{` that a combining mark follows, which
    /// `placeholderParts` reads as a placeholder.
    var holdsDoubleBrace: Bool {
        var previous: UInt8 = 0
        for byte in utf8 {
            if byte == UInt8(ascii: "{") && previous == byte { return true }
            previous = byte
        }
        return false
    }
}
