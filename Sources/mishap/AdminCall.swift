import MishapSupport

/// One call to the admin API of the server at `url` over a plain socket (`Connection: close`,
/// read to the end): for `status --url` and `state`, where no HTTP client may be installed.
func adminCall(url: String, token: String?, method: String = "GET", target: String, body: String = "",
               timeoutMilliseconds: Int32 = 3000) -> Result<(status: Int, body: String), AdminCallFailure> {
    guard url.hasPrefix("http://") else { return .failure(AdminCallFailure("only http:// URLs are supported: \(url)")) }
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
    defer { close(descriptor) }
    var timeout = timeval(tv_sec: Int(timeoutMilliseconds / 1000), tv_usec: Int(timeoutMilliseconds % 1000) * 1000)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
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
    // The body follows the blank line that ends the head.
    var payload = ""
    if let end = response.indices.first(where: { response[$0...].starts(with: [13, 10, 13, 10]) }) {
        payload = String(decoding: response[(end + 4)...], as: UTF8.self)
    }
    return .success((status, payload))
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
    /// The URL of the server the pid file names, when one runs.
    static func serverURL(_ option: PidFileOption) -> String? {
        if case .server(let file, _) = PidFile.check(FileSystem.absolutePath(option.pidFile)) { return file.url }
        return nil
    }
}
