import MishapEngine

/// A session in the path, for clients that cannot add the session header (an app under a UI
/// test, given only a base URL): `/__session/ID/PATH` is served as `PATH` in session `ID`.
enum SessionPath {
    /// What a path under the prefix stands for.
    enum Split: Equatable {
        /// Not under the prefix: served as it is.
        case none
        /// `PATH` (at least `/`) in session `ID`.
        case session(id: String, path: String)
        /// Under the prefix, without a session id.
        case missingID
    }

    static func split(_ path: String, prefix: String) -> Split {
        guard path.hasPrefix(prefix) else { return .none }
        let rest = path.dropFirst(prefix.count)
        guard rest.isEmpty || rest.hasPrefix("/") else { return .none }
        let afterSlash = rest.dropFirst()
        let id = afterSlash.prefix { $0 != "/" }
        guard !id.isEmpty else { return .missingID }
        let remainder = afterSlash.dropFirst(id.count)
        return .session(id: String(id), path: remainder.isEmpty ? "/" : String(remainder))
    }

    /// `request` as its session path stands for it: the path without the prefix and the session
    /// header (any the client sent replaced); nil when it names no session id.
    static func rewrite(_ request: Request, prefix: String, sessionHeader: String) -> Request?? {
        switch split(request.path, prefix: prefix) {
        case .none: return .some(nil)
        case .missingID: return nil
        case .session(let id, let path):
            var rewritten = request
            rewritten.path = path
            rewritten.headers.removeAll { $0.name.equalsIgnoringASCIICase(sessionHeader) }
            rewritten.headers.append(Field(sessionHeader, id))
            return .some(rewritten)
        }
    }
}
