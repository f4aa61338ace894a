import MishapSupport

/// `GET /__mishap/health` over a plain socket: true when the server at `url` answers 200.
/// For container health checks and readiness waits, where no HTTP client may be installed.
func healthCheck(url: String, token: String? = nil, timeoutMilliseconds: Int32 = 3000) -> Result<Void, HealthCheckFailure> {
    guard url.hasPrefix("http://") else { return .failure(HealthCheckFailure("only http:// URLs are supported: \(url)")) }
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
    case .failure(.refused(let reason)): return .failure(HealthCheckFailure("nothing accepts connections at \(url): \(reason)"))
    case .failure(let failure): return .failure(HealthCheckFailure(failure.description))
    }
    defer { close(descriptor) }
    let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
    let request = "GET /__mishap/health HTTP/1.1\r\nHost: \(rest)\r\n\(authorization)Connection: close\r\n\r\n"
    guard FileDescriptor.writeAll(descriptor, request) else { return .failure(HealthCheckFailure("cannot send to \(url)")) }
    let response = Socket.read(descriptor, atLeast: 64)
    let statusLine = String(decoding: response.prefix(while: { $0 != UInt8(ascii: "\r") }), as: UTF8.self)
    guard statusLine.hasPrefix("HTTP/1.1 200") else {
        return .failure(HealthCheckFailure("\(url)/__mishap/health answered '\(statusLine)'"))
    }
    return .success(())
}

struct HealthCheckFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
