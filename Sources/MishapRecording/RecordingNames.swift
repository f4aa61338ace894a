/// The names a recording gives what it writes: scenario files (one per endpoint), body files
/// and rules, each readable, made of safe characters only, and unique where it must be.
public enum RecordingNames {
    /// `text` with ASCII letters, digits and `.` kept and every run of anything else made one
    /// `-`, with no `-` at either end.
    public static func sanitized(_ text: String) -> String {
        var out = ""
        var pendingDash = false
        for scalar in text.unicodeScalars {
            let keep = scalar.isASCII && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                                          || ("0"..."9").contains(scalar) || scalar == ".")
            if keep {
                if pendingDash && !out.isEmpty { out.unicodeScalars.append("-") }
                pendingDash = false
                out.unicodeScalars.append(scalar)
            } else {
                pendingDash = true
            }
        }
        return out
    }

    /// The stem of the scenario file of an endpoint (`get_v1-orders` for `GET /v1/orders`,
    /// `get_root` for `GET /`): the method in lower case, `_`, the path's segments joined by
    /// `-`; at most 100 characters, and never starting with `.` (the loader skips hidden files).
    public static func fileStem(method: String, path: String) -> String {
        let segments = path.split(separator: "/").map { sanitized(String($0)) }.filter { !$0.isEmpty }
        var stem = method.lowercased() + "_" + (segments.isEmpty ? "root" : segments.joined(separator: "-"))
        while stem.hasSuffix(".") { stem.removeLast() }
        return String(stem.prefix(100))
    }

    /// `base`, or `base-2`, `base-3`, ... : the first not in `taken`, compared in lower case
    /// (rule names are compared in any case, and so are file names on some systems).
    public static func unique(_ base: String, in taken: Set<String>) -> String {
        if !taken.contains(base.lowercased()) { return base }
        var number = 2
        while taken.contains("\(base)-\(number)".lowercased()) { number += 1 }
        return "\(base)-\(number)"
    }

    /// The extension of a body file holding a body of `contentType` (`json`, `html`, ...; `bin`
    /// for one that has no better), which is what a `file:` body's type is taken from when the
    /// recorded headers give none.
    public static func fileExtension(contentType: String?) -> String {
        guard let contentType else { return "bin" }
        // The media type without its parameters; media types hold no spaces.
        let type = String((contentType.split(separator: ";").first ?? "").filter { $0 != " " && $0 != "\t" }).lowercased()
        switch type {
        case "application/json": return "json"
        case _ where type.hasSuffix("+json"): return "json"
        case "text/html": return "html"
        case "text/plain": return "txt"
        case "application/xml", "text/xml": return "xml"
        case "text/css": return "css"
        case "text/javascript", "application/javascript": return "js"
        case "image/png": return "png"
        case "image/jpeg": return "jpg"
        case "image/gif": return "gif"
        case "image/svg+xml": return "svg"
        case "application/pdf": return "pdf"
        default: return "bin"
        }
    }
}
