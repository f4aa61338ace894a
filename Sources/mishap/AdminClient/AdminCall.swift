import MishapSupport
import MishapTLS
import MishapUpstream
import Synchronization

/// The server `state`, `force` and `status` ask when neither `--url` nor a pid file names one.
let defaultServerURL = "http://127.0.0.1:8080"

/// One call to the admin API of the server at `url`: its status and body. For `state`, `force`
/// and `routes --url`; see `adminExchange`.
func adminCall(url: String, token: String?, method: String = "GET", target: String, body: String = "",
               timeoutMilliseconds: Int32 = 3000) -> Result<(status: Int, body: String), AdminCallFailure> {
    adminExchange(url: url, token: token, method: method, target: target, body: body, timeoutMilliseconds: timeoutMilliseconds)
        .map { ($0.status, $0.body) }
}

/// An admin call's answer: its status, header lines and body.
struct AdminAnswer {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: String

    /// The first header called `name`, in any case.
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// One call to the admin API of the server at `url`. An `http://` URL is called over a plain
/// socket (`Connection: close`, read to the end), needing no HTTP client; an `https://` one
/// through libcurl (as `--upstream` is), trusting the local certificate authority (`ca.pem` in
/// `$MISHAP_TLS_DIR`, else `~/.local/share/mishap/tls`, the one `serve --tls-port` uses) when
/// there is one, else the system's.
func adminExchange(url: String, token: String?, method: String = "GET", target: String, body: String = "",
                   timeoutMilliseconds: Int32 = 3000) -> Result<AdminAnswer, AdminCallFailure> {
    if url.hasPrefix("https://") {
        return secureExchange(url: url, token: token, method: method, target: target, body: body,
                              timeoutMilliseconds: timeoutMilliseconds)
    }
    guard url.hasPrefix("http://") else { return .failure(AdminCallFailure("only http:// and https:// URLs are supported: \(url)")) }
    var rest = url.dropFirst("http://".count)
    if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
    let host: String, port: String
    if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
        host = String(rest[rest.index(after: rest.startIndex)..<close])
        port = rest[close...].split(separator: ":").last.map(String.init) ?? "80"
    } else if let colon = rest.lastIndex(of: ":") {
        host = String(rest[..<colon])
        port = String(rest[rest.index(after: colon)...])
    } else {
        host = String(rest)
        port = "80"
    }
    let descriptor: Int32
    switch Socket.connect(host: host, port: port, timeoutMilliseconds: timeoutMilliseconds) {
    case .success(let connected): descriptor = connected
    case .failure(.refused(let reason)): return .failure(AdminCallFailure("nothing accepts connections at \(url): \(reason)"))
    case .failure(let failure): return .failure(AdminCallFailure(failure.description))
    }
    defer { FileDescriptor.close(descriptor) }
    Socket.setReceiveTimeout(descriptor, milliseconds: timeoutMilliseconds)
    let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
    let content = body.isEmpty ? "" : "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
    let request = "\(method) \(target) HTTP/1.1\r\nHost: \(rest)\r\n\(authorization)\(content)Connection: close\r\n\r\n\(body)"
    guard FileDescriptor.writeAll(descriptor, request) else { return .failure(AdminCallFailure("cannot send to \(url)")) }
    let response = Socket.read(descriptor, atLeast: .max)
    let text = String(decoding: response, as: UTF8.self)
    let statusLine = text.prefix(while: { $0 != "\r" && $0 != "\n" })
    let parts = statusLine.split(separator: " ")
    guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
        return .failure(AdminCallFailure("\(url)\(target) answered '\(statusLine)'"))
    }
    // The head ends at the blank line; the body follows it.
    var headers: [(name: String, value: String)] = []
    var payload = ""
    if let end = response.indices.first(where: { response[$0...].starts(with: [13, 10, 13, 10]) }) {
        payload = String(decoding: response[(end + 4)...], as: UTF8.self)
        for line in String(decoding: response[..<end], as: UTF8.self).split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " })))
        }
    }
    return .success(AdminAnswer(status: status, headers: headers, body: payload))
}

/// `adminExchange` for an `https://` URL, through libcurl.
private func secureExchange(url: String, token: String?, method: String, target: String, body: String,
                            timeoutMilliseconds: Int32) -> Result<AdminAnswer, AdminCallFailure> {
    let authority = CertificateAuthority.defaultDirectory() + "/" + CertificateAuthority.certificateFile
    let trust = FileSystem.readBytes(authority) != nil ? authority : nil
    guard let client = UpstreamClient(timeoutMilliseconds: Int(timeoutMilliseconds), caFile: trust) else {
        return .failure(AdminCallFailure("cannot call \(url): \(UpstreamClient.loadLibrary() ?? "no thread for the call")"))
    }
    defer { client.stop() }
    var headers: [(name: String, value: String)] = token.map { [("Authorization", "Bearer \($0)")] } ?? []
    if !body.isEmpty { headers.append(("Content-Type", "application/json")) }
    let base = url.hasSuffix("/") ? String(url.dropLast()) : url
    let result = AwaitedResult()
    client.send(UpstreamCall(method: method, url: base + target, headers: headers, body: Array(body.utf8))) { answer, _ in
        result.set(answer)
    }
    switch result.wait() {
    case .answered(let status, let headers, let bytes, _)?:
        return .success(AdminAnswer(status: status, headers: headers, body: String(decoding: bytes, as: UTF8.self)))
    case .failed(let failure, _)?:
        let trusted = trust.map { "the local certificate authority \($0)" } ?? "the system's certificate authorities"
        let hint = failure.kind == .tls ? " (trusting \(trusted))" : ""
        return .failure(AdminCallFailure("\(url)\(target): \(failure.message)\(hint)"))
    case nil:
        return .failure(AdminCallFailure("\(url)\(target): no answer"))
    }
}

/// The result of one libcurl call, handed from the client's thread to the one waiting for it.
private final class AwaitedResult: Sendable {
    private let value = Mutex<UpstreamResult?>(nil)
    private let done = Latch()

    /// Called once, on the client's thread.
    func set(_ result: UpstreamResult) {
        value.withLock { $0 = result }
        done.open()
    }

    /// Waits for `set`.
    func wait() -> UpstreamResult? {
        done.wait()
        return value.withLock { $0 }
    }
}

struct AdminCallFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Text for a query string: every byte but unreserved ones percent-encoded.
enum QueryText {
    static func encoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(Character(Unicode.Scalar(byte)))
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0x0F, radix: 16, uppercase: true)
            }
        }
        return out
    }
}

extension PidFileOption {
    /// The URL to call the server the pid file names at, when one runs (`reachableURL`).
    static func serverURL(_ option: PidFileOption) -> String? {
        if case .server(let file, _) = PidFile.check(FileSystem.absolutePath(option.pidFile)) {
            // The admin port, when there is one: it answers while the serving port is down.
            return (file.adminURL ?? file.url).map(reachableURL)
        }
        return nil
    }
}

/// `url` with an address that accepts connections on every interface (`0.0.0.0`, `::`, which a
/// server bound there writes in its pid file) made the loopback one: the address to call it at,
/// and one its certificate names.
func reachableURL(_ url: String) -> String {
    for (any, loopback) in [("://0.0.0.0:", "://127.0.0.1:"), ("://[::]:", "://[::1]:")] {
        if let range = url.firstRange(of: any) {
            var local = url
            local.replaceSubrange(range, with: loopback)
            return local
        }
    }
    return url
}
