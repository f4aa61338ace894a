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
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, port, &hints, &list) == 0, let first = list else {
        return .failure(HealthCheckFailure("cannot resolve \(host)"))
    }
    defer { freeaddrinfo(list) }
    let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
    guard descriptor >= 0 else { return .failure(HealthCheckFailure("no socket")) }
    defer { close(descriptor) }
    var timeout = timeval(tv_sec: Int(timeoutMilliseconds / 1000), tv_usec: Int(timeoutMilliseconds % 1000) * 1000)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard connect(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
        return .failure(HealthCheckFailure("nothing accepts connections at \(url): \(Platform.describe(errno: errno))"))
    }
    let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
    let request = "GET /__mishap/health HTTP/1.1\r\nHost: \(rest)\r\n\(authorization)Connection: close\r\n\r\n"
    guard FileDescriptor.writeAll(descriptor, request) else { return .failure(HealthCheckFailure("cannot send to \(url)")) }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1024)
    while response.count < 64 {
        let count = read(descriptor, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        response += buffer[..<count]
    }
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
