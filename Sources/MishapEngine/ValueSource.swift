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

    public var description: String {
        switch self {
        case .query(let name): return "query.\(name)"
        case .header(let name): return "headers.\(name)"
        case .body(let path): return "body.\(path.joined(separator: "."))"
        case .pathParameter(let name): return "path.\(name)"
        case .method: return "request.method"
        case .path: return "request.path"
        case .httpDate(let offset): return offset == 0 ? "now" : "now\(offset > 0 ? "+" : "")\(offset)s"
        }
    }
}
