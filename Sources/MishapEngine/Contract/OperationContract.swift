/// One operation of an API description (`GET /pets/{id}`), compiled: its path template, its
/// parameters and its request body, each with the check its schema became.
public struct OperationContract: Sendable {
    /// A piece of a path template: a literal segment, or a `{name}` parameter.
    public enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    /// Where a parameter is sent.
    public enum Location: String, Sendable {
        case path, query, header
    }

    /// One parameter: where it is sent, its name, whether it must be, and its schema.
    public struct Parameter: Sendable {
        public var location: Location
        public var name: String
        public var required: Bool
        public var check: ValueCheck
        public init(location: Location, name: String, required: Bool, check: ValueCheck) {
            self.location = location
            self.name = name
            self.required = required
            self.check = check
        }
    }

    /// The request body: whether one must be sent, the media types declared, and the schema of
    /// its JSON one (nil when there is none, or it has no schema).
    public struct Body: Sendable {
        public var required: Bool
        public var mediaTypes: [String]
        public var json: ValueCheck?
        public init(required: Bool, mediaTypes: [String], json: ValueCheck?) {
            self.required = required
            self.mediaTypes = mediaTypes
            self.json = json
        }
    }

    /// `GET /pets/{id}`, as problems and the log name it.
    public var name: String
    public var method: String
    public var segments: [Segment]
    public var parameters: [Parameter]
    public var body: Body?

    public init(method: String, template: String, parameters: [Parameter], body: Body?) {
        self.method = method
        self.name = "\(method) \(template)"
        self.segments = Self.segments(of: template)
        self.parameters = parameters
        self.body = body
    }

    /// The segments of a path template, `/pets/{id}` as `pets`, `{id}`.
    static func segments(of template: String) -> [Segment] {
        template.split(separator: "/").map { piece in
            if piece.hasPrefix("{") && piece.hasSuffix("}") && piece.count > 2 {
                return .parameter(String(piece.dropFirst().dropLast()))
            }
            return .literal(String(piece))
        }
    }

    /// How many literal segments the template has: `/pets/mine` is tried before `/pets/{id}`.
    var literalCount: Int {
        segments.count { if case .literal = $0 { true } else { false } }
    }

    /// The values of the path's parameters when `path` (its segments) fits the template; nil otherwise.
    func pathValues(_ pieces: [Substring]) -> [(String, String)]? {
        guard pieces.count == segments.count else { return nil }
        var values: [(String, String)] = []
        for (segment, piece) in zip(segments, pieces) {
            switch segment {
            case .literal(let text): guard piece == text else { return nil }
            case .parameter(let name): values.append((name, String(piece)))
            }
        }
        return values
    }
}
