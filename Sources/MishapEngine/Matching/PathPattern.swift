import MishapSupport

/// An endpoint's path: literal segments, `{name}` segments that capture one segment, and a
/// final `*` that matches the rest.
public struct PathPattern: Sendable, Hashable, CustomStringConvertible {
    public enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
        case rest
    }

    public let segments: [Segment]
    public let description: String

    /// Parses a path such as `/users/{id}/orders` or `/static/*`; nil when it is not a path.
    public init?(_ text: String) {
        guard text.hasPrefix("/") else { return nil }
        var segments: [Segment] = []
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (i, part) in parts.enumerated() {
            if part == "*" {
                guard i == parts.count - 1 else { return nil }
                segments.append(.rest)
            } else if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
                segments.append(.parameter(String(part.dropFirst().dropLast())))
            } else {
                guard !part.contains("{") && !part.contains("}") else { return nil }
                segments.append(.literal(String(part)))
            }
        }
        self.segments = segments
        self.description = text
    }

    /// Whether the path has no parameters or wildcard, and so can be found by exact lookup.
    public var isLiteral: Bool {
        segments.allSatisfy { if case .literal = $0 { return true } else { return false } }
    }

    /// The names of its `{name}` segments.
    public var parameterNames: [String] {
        segments.compactMap { if case .parameter(let name) = $0 { return name } else { return nil } }
    }

    /// Matches `path`, returning the captured parameters, or nil.
    func match(_ path: String) -> [Field]? {
        match(parts: Self.parts(of: path))
    }

    /// A request path's segments, as matching reads them: `/a/b/` is `a`, `b`, and an empty one.
    /// Split byte by byte (`/` is ASCII), not by Characters, which costs thousands of
    /// instructions a path; the segments are those of `split(separator: "/")` after the first.
    static func parts(of path: String) -> [Substring] {
        let slash = UInt8(ascii: "/")
        // Over the bytes in place (stepping a UTF-8 view's indices cost about 50 instructions
        // a byte); a slash is never inside a multi-byte character, so each one is a character
        // boundary. Counted first, so the parts are allocated once.
        let split: [Substring]? = path.utf8.withContiguousStorageIfAvailable { bytes in
            let slashes = bytes.reduce(0) { $1 == slash ? $0 + 1 : $0 }
            guard slashes > 0 else { return [] }
            let utf8 = path.utf8
            func index(_ offset: Int) -> String.Index { utf8.index(utf8.startIndex, offsetBy: offset) }
            var parts: [Substring] = []
            parts.reserveCapacity(slashes)
            var start = -1
            for offset in bytes.indices where bytes[offset] == slash {
                if start >= 0 { parts.append(path[index(start)..<index(offset)]) }
                start = offset + 1
            }
            parts.append(path[index(start)..<path.endIndex])
            return parts
        }
        return split ?? slowParts(of: path)
    }

    /// The parameters of a path's parts that `PathTrie` has already matched to this pattern
    /// (so its literal segments need no second comparison): each `{name}` with its part.
    func captures(_ parts: [Substring]) -> [Field] {
        var captured: [Field] = []
        for (offset, segment) in segments.enumerated() {
            if case .parameter(let name) = segment { captured.append(Field(name, String(parts[offset]))) }
        }
        return captured
    }

    /// `captures(_:)` for the bytes of an ASCII path that `PathTrie` has matched to this
    /// pattern, whose first part starts at `firstPart` (nil: the path has none).
    func captures(_ bytes: UnsafeBufferPointer<UInt8>, firstPart: Int?) -> [Field] {
        var captured: [Field] = []
        var start = firstPart
        for segment in segments {
            guard let begin = start else { break }
            let (end, next) = PathTrie.part(of: bytes, from: begin)
            if case .parameter(let name) = segment {
                captured.append(Field(name, String(decoding: UnsafeBufferPointer(rebasing: bytes[begin..<end]), as: UTF8.self)))
            }
            start = next
        }
        return captured
    }

    /// `parts(of:)` for a string without contiguous UTF-8 (a bridged one, which a request's
    /// path never is).
    private static func slowParts(of path: String) -> [Substring] {
        let slash = UInt8(ascii: "/")
        let utf8 = path.utf8
        guard let firstSlash = utf8.firstIndex(of: slash) else { return [] }
        var parts: [Substring] = []
        var start = utf8.index(after: firstSlash)
        var index = start
        while index < utf8.endIndex {
            if utf8[index] == slash {
                parts.append(path[start..<index])
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        parts.append(path[start..<utf8.endIndex])
        return parts
    }

    /// Whether a part of a path and a literal segment have the same bytes, compared in place.
    private static func sameBytes(_ part: Substring, _ literal: String) -> Bool {
        guard part.utf8.count == literal.utf8.count else { return false }
        return part.withUTF8Bytes(and: literal) { part, literal in part.indices.allSatisfy { part[$0] == literal[$0] } } ?? false
    }

    /// Matches a path already split by `parts(of:)`.
    func match(parts: [Substring]) -> [Field]? {
        var captured: [Field] = []
        var index = parts.startIndex
        for segment in segments {
            switch segment {
            case .rest:
                return captured
            case .literal(let literal):
                // Equal bytes are equal strings; only different ones need String's comparison
                // (canonical equivalence), which costs a few hundred instructions even for ASCII.
                guard index < parts.endIndex,
                      Self.sameBytes(parts[index], literal) || parts[index] == literal else { return nil }
            case .parameter(let name):
                guard index < parts.endIndex, !parts[index].isEmpty else { return nil }
                captured.append(Field(name, String(parts[index])))
            }
            index += 1
        }
        return index == parts.endIndex ? captured : nil
    }
}
