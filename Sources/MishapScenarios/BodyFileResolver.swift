import MishapSupport

/// Finds the files responses name (`file: files/captive-portal.html`): relative to the scenario
/// file, and never outside the scenarios folder, symbolic links included.
struct BodyFileResolver {
    /// The folder of the scenario file naming the body.
    let directory: String
    /// The scenarios folder, fully resolved; nil for scenarios given as text with no folder.
    let root: String?

    struct Problem: Error {
        let message: String
    }

    func read(_ path: String) -> Result<[UInt8], Problem> {
        guard let root else {
            return .failure(Problem(message: "'file: \(path)' needs a scenarios folder to be read from"))
        }
        let joined = path.hasPrefix("/") ? path : directory + "/" + path
        guard let real = FileSystem.realPath(joined) else {
            return .failure(Problem(message: "body file '\(path)' not found (looked for \(joined))"))
        }
        guard real.hasPrefix(root + "/") else {
            return .failure(Problem(message: "body file '\(path)' is outside the scenarios folder \(root)"))
        }
        switch ScenarioLoader.readRegularFile(real, limit: Self.maximumSize, what: "a body file") {
        case .success(let bytes): return .success(bytes)
        case .failure(let problem): return .failure(Problem(message: "body file '\(path)' \(problem.message)"))
        }
    }

    /// The largest body file read (each is held in memory while its scenarios serve).
    static let maximumSize = 64 * 1024 * 1024

    /// The `Content-Type` a body file is sent with, from its extension.
    static func contentType(forPath path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let ext = name.contains(".") ? name.split(separator: ".").last!.lowercased() : ""
        switch ext {
        case "json": return "application/json; charset=utf-8"
        case "html", "htm": return "text/html; charset=utf-8"
        case "txt": return "text/plain; charset=utf-8"
        case "xml": return "application/xml; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js": return "text/javascript; charset=utf-8"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "svg": return "image/svg+xml"
        case "pdf": return "application/pdf"
        default: return "application/octet-stream"
        }
    }
}
