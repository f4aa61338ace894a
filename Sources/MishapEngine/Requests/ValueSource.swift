/// A value taken from the request, named in conditions and in `{{placeholders}}`.
public enum ValueSource: Sendable, Hashable, CustomStringConvertible {
    /// A query parameter: `query.userName`.
    case query(String)
    /// A request header, case-insensitive: `headers.Authorization`.
    case header(String)
    /// A field of a JSON or form body; nested JSON fields are separated by dots: `body.user.email`.
    case body([String])
    /// A `{name}` segment of the endpoint's path: `path.id`.
    case pathParameter(String)
    /// The request method: `request.method`.
    case method
    /// The request path: `request.path`.
    case path
    /// The time now plus some seconds as an HTTP-date (`Sun, 06 Nov 1994 08:49:37 GMT`), for
    /// `Retry-After` and `Expires`: `now`, `now+30s`.
    case httpDate(offsetSeconds: Int)
    /// The time now plus some seconds in another form: `now+60s.iso8601`, `now.epoch`.
    case time(offsetSeconds: Int, format: TimeFormat)
    /// A state value declared in a scenario file, by name and slot: `state.accessToken`.
    case state(name: String, slot: Int)
    /// A new random version-4 UUID for each use: `random.uuid`.
    case uuid
    /// New random lowercase hex digits for each use, this many: `random.hex` (32), `random.hex.16`.
    case hex(digits: Int)

    /// How `time` writes a moment.
    public enum TimeFormat: String, Sendable, Hashable {
        /// `2026-11-24T09:30:12.345Z`.
        case iso8601
        /// Whole seconds since 1970: `1795512612`.
        case epoch
    }

    public var description: String {
        switch self {
        case .query(let name): return "query.\(name)"
        case .header(let name): return "headers.\(name)"
        case .body(let path): return "body.\(path.joined(separator: "."))"
        case .pathParameter(let name): return "path.\(name)"
        case .method: return "request.method"
        case .path: return "request.path"
        case .httpDate(let offset): return Self.now(offset)
        case .time(let offset, let format): return "\(Self.now(offset)).\(format.rawValue)"
        case .state(let name, _): return "state.\(name)"
        case .uuid: return "random.uuid"
        case .hex(let digits): return digits == 32 ? "random.hex" : "random.hex.\(digits)"
        }
    }

    private static func now(_ offset: Int) -> String {
        offset == 0 ? "now" : "now\(offset > 0 ? "+" : "")\(offset)s"
    }

    /// Whether the value is a state value (reading it needs the session's set, under its lock).
    public var isState: Bool {
        if case .state = self { return true }
        return false
    }
}
