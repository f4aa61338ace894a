import MishapSupport

/// Text with `{{placeholders}}`, split once at load time into literal bytes and request values.
public struct Template: Sendable {
    public enum Segment: Sendable {
        case literal([UInt8])
        case value(ValueSource)
    }

    /// How substituted request values are made safe for where the text goes.
    public enum Escaping: Sendable {
        /// As they are (text bodies).
        case none
        /// Escaped for the inside of a JSON string, so a JSON body stays valid whatever the client sent.
        case json
        /// With control characters (CR, LF, NUL and the others but tab) removed, so a value
        /// cannot end the header and start another, nor make the header invalid.
        case header
    }

    public let segments: [Segment]
    public let escaping: Escaping
    /// The bytes rendering starts with room for: the literals and a few per value, so a body
    /// like `{"userName":"{{query.userName}}"}` is written without growing its array.
    let capacityHint: Int

    public init(segments: [Segment], escaping: Escaping) {
        // Adjacent literals are merged so rendering appends as few pieces as possible; a run of
        // them is gathered in one buffer (replacing the last segment with `previous + bytes`
        // copied the run again at each piece).
        var merged: [Segment] = []
        var run: [UInt8] = []
        var inRun = false
        for segment in segments {
            if case .literal(let bytes) = segment {
                if inRun { run.append(contentsOf: bytes) } else { run = bytes; inRun = true }
            } else {
                if inRun { merged.append(.literal(run)); run = []; inRun = false }
                merged.append(segment)
            }
        }
        if inRun { merged.append(.literal(run)) }
        self.segments = merged
        self.escaping = escaping
        self.capacityHint = merged.reduce(0) { total, segment in
            if case .literal(let bytes) = segment { return total + bytes.count }
            return total + 32
        }
    }

    /// A template without placeholders.
    public init(literal text: String) {
        self.init(segments: [.literal(Array(text.utf8))], escaping: .none)
    }

    /// The bytes when the template has no placeholders.
    public var staticBytes: [UInt8]? {
        if segments.isEmpty { return [] }
        if segments.count == 1, case .literal(let bytes) = segments[0] { return bytes }
        return nil
    }

    /// Whether filling the template in reads state values.
    public var readsState: Bool {
        segments.contains { segment in
            if case .value(let source) = segment { return source.isState }
            return false
        }
    }

    func render(into out: inout [UInt8], context: inout MatchContext) {
        for segment in segments {
            switch segment {
            case .literal(let bytes):
                out.append(contentsOf: bytes)
            case .value(let source):
                guard let value = context.value(of: source) else { continue }
                switch escaping {
                case .none: out.append(contentsOf: value.utf8)
                case .json: JSONEscaping.appendEscaped(value, to: &out)
                case .header:
                    for byte in value.utf8 where (byte >= 0x20 && byte != 0x7F) || byte == 0x09 { out.append(byte) }
                }
            }
        }
    }

    func render(context: inout MatchContext) -> [UInt8] {
        if let bytes = staticBytes { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(capacityHint)
        render(into: &out, context: &context)
        return out
    }
}
