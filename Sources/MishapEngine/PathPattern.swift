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
    static func parts(of path: String) -> [Substring] {
        Array(path.split(separator: "/", omittingEmptySubsequences: false).dropFirst())
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
                guard index < parts.endIndex, parts[index] == literal else { return nil }
            case .parameter(let name):
                guard index < parts.endIndex, !parts[index].isEmpty else { return nil }
                captured.append(Field(name, String(parts[index])))
            }
            index += 1
        }
        return index == parts.endIndex ? captured : nil
    }
}
