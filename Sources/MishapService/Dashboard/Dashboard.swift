import MishapEngine
import MishapSupport

/// The dashboard at `/__mishap/ui/`: a page of plain HTML, CSS and JavaScript, embedded in the
/// binary (the files in `Dashboard/`, built in with SwiftPM's `embedInCode`), that reads and
/// drives the admin API from the browser. It is served under the admin API's access rules
/// (loopback, or the admin token); nothing is fetched from elsewhere, so it works offline, and
/// its Content-Security-Policy lets the page load its own files and call its own server only.
///
/// With `MISHAP_UI_DIR` set to a folder holding the same files, they are read from there at
/// each request instead, so the page can be edited and reloaded without rebuilding Mishap.
enum Dashboard {
    /// A file of the page: its name under `/__mishap/ui/`, its type and its embedded bytes.
    struct Asset: Sendable {
        let name: String
        let contentType: String
        let bytes: [UInt8]
    }

    static let assets: [Asset] = [
        Asset(name: "index.html", contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html),
        Asset(name: "page.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.page_js),
        Asset(name: "polling.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.polling_js),
        Asset(name: "requests.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.requests_js),
        Asset(name: "rules.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.rules_js),
        Asset(name: "sessions.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.sessions_js),
        Asset(name: "retries.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.retries_js),
        Asset(name: "verdict.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.verdict_js),
        Asset(name: "controls.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.controls_js),
        Asset(name: "app.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.app_js),
        Asset(name: "app.css", contentType: "text/css; charset=utf-8", bytes: PackageResources.app_css),
    ]

    /// Where the files are read from instead of the binary, for work on the page itself.
    static let folder: String? = {
        guard let path = Platform.environment("MISHAP_UI_DIR") else { return nil }
        return path.isEmpty ? nil : path
    }()

    /// The headers every file of the page carries: no caching (a new Mishap may serve a new
    /// page), no type sniffing, no framing, and a policy that keeps the page to its own origin.
    static let securityHeaders = [
        Field("Cache-Control", "no-cache"),
        Field("X-Content-Type-Options", "nosniff"),
        Field("X-Frame-Options", "DENY"),
        Field("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
        Field("Referrer-Policy", "no-referrer"),
    ]

    /// The answer to a request for `file` under `/__mishap/ui/` (empty for the page itself).
    static func respond(to request: Request, file: String) -> ResponsePlan {
        guard request.method == "GET" || request.method == "HEAD" else {
            var plan = AdminAPI.error(405, "\(request.path) takes GET")
            plan.headers.append(Field("Allow", "GET, HEAD"))
            return plan
        }
        if !request.query.isEmpty {
            return AdminAPI.error(400, "\(request.path) takes no query parameters")
        }
        // The page is `/__mishap/ui/` and `/__mishap/ui` alike (it names its files by absolute
        // paths), rather than a redirect from one to the other: swift-corelibs-foundation's
        // URLSession follows `Location: /__mishap/ui/` back to `/__mishap/ui` until it gives up.
        let name = file.isEmpty ? "index.html" : file
        guard let asset = assets.first(where: { $0.name == name }) else {
            return AdminAPI.error(404, "the dashboard has no file '\(name)'; it has " + assets.map(\.name).joined(separator: ", "))
        }
        var bytes = asset.bytes
        if let folder, let text = FileSystem.readText(folder + "/" + asset.name) {
            bytes = Array(text.utf8)
        }
        return ResponsePlan(status: 200, headers: [Field("Content-Type", asset.contentType)] + securityHeaders, body: bytes)
    }
}
