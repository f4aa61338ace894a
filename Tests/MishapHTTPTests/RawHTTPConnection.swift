import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to a test server, for what URLSession hides: several requests on one
/// connection, the `Connection` header, a HEAD response's (absent) body, bytes exactly as sent.
///
/// Blocking POSIX calls with a receive timeout, so a server that never answers fails the test
/// instead of hanging it.
final class RawHTTPConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let descriptor: Int32
    /// Bytes received but not yet consumed by a response.
    private var pending: [UInt8] = []

    init(port: UInt16, timeoutSeconds: Int = 10) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // A failed connect leaves the socket to deinit, which closes it once (closing it here
        // too would close a number another test may have been given meanwhile).
        guard result == 0 else {
            throw Failure(description: "connect() to 127.0.0.1:\(port) failed: errno \(errno)")
        }
    }

    deinit { close(descriptor) }

    /// Writes every byte.
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { throw Failure(description: "send() failed: errno \(errno)") }
            offset += written
        }
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Sends one HTTP/1.1 request. A `Content-Length` is added when there is a body.
    func sendRequest(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws {
        try send(Self.request(method, target, headers: headers, body: body))
    }

    /// The bytes of one HTTP/1.1 request.
    static func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) -> [UInt8] {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    /// Reads one complete response: the head, then `Content-Length` bytes of body (none after a
    /// HEAD request, whose Content-Length describes the body a GET would get).
    func readResponse(toHead: Bool = false) throws -> ClientResponse {
        let terminator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = pending.firstRange(of: terminator)?.lowerBound
            if headEnd == nil { try receiveMore() }
        }
        let head = String(decoding: pending[..<headEnd!], as: UTF8.self)
        pending.removeFirst(headEnd! + terminator.count)

        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "not an HTTP status line: \(head)")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw Failure(description: "bad header line: \(line)") }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        var response = ClientResponse(status: status, headers: headers, body: Data(), httpVersion: String(statusLine[0]))
        if toHead { return response }
        if response.header("Transfer-Encoding") != nil {
            throw Failure(description: "chunked responses are not expected from Mishap: \(head)")
        }
        let length = Int(response.header("Content-Length") ?? "0") ?? 0
        while pending.count < length { try receiveMore() }
        response.body = Data(pending[..<length])
        pending.removeFirst(length)
        return response
    }

    /// Everything the server sends until it closes the connection.
    func readToEnd() throws -> [UInt8] {
        while try receiveMore(allowEnd: true) {}
        defer { pending = [] }
        return pending
    }

    /// What one receive brought: bytes, the server's clean close (EOF), or a failure such as a
    /// reset (`ECONNRESET`). A receive timeout is thrown, not returned.
    enum Received: Equatable {
        case bytes([UInt8])
        case closed
        case failed(errno: Int32)
    }

    /// Bytes already read past a response's head (by `readResponse(toHead: true)`), else one
    /// receive.
    func receivePiece() throws -> Received {
        if !pending.isEmpty {
            defer { pending = [] }
            return .bytes(pending)
        }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let received = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if received > 0 { return .bytes(Array(chunk[..<received])) }
        if received == 0 { return .closed }
        let code = errno
        if code == EAGAIN || code == EWOULDBLOCK {
            throw Failure(description: "recv() timed out: the server neither answered nor closed")
        }
        return .failed(errno: code)
    }

    /// Everything until the stream ends, piece by piece with the time each arrived, and how it
    /// ended (`.closed` or `.failed`).
    func readPiecesToEnd() throws -> (pieces: [(bytes: [UInt8], at: ContinuousClock.Instant)], end: Received) {
        var pieces: [(bytes: [UInt8], at: ContinuousClock.Instant)] = []
        while true {
            let piece = try receivePiece()
            guard case .bytes(let bytes) = piece else { return (pieces, piece) }
            pieces.append((bytes, ContinuousClock.now))
        }
    }

    /// Whether response bytes (or the end of the stream) are waiting, without consuming them or
    /// blocking.
    var hasSomethingToRead: Bool {
        if !pending.isEmpty { return true }
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0
    }

    /// Appends what the socket has to `pending`; false at the end of the stream.
    @discardableResult
    private func receiveMore(allowEnd: Bool = false) throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let received = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if received < 0 { throw Failure(description: "recv() failed or timed out: errno \(errno)") }
        if received == 0 {
            if allowEnd { return false }
            throw Failure(description: "connection closed after \(pending.count) unread bytes")
        }
        pending += chunk[..<received]
        return true
    }
}

extension TestServer {
    /// A new raw connection to this server.
    func connect(timeoutSeconds: Int = 10) throws -> RawHTTPConnection {
        try RawHTTPConnection(port: server.port!, timeoutSeconds: timeoutSeconds)
    }

    /// One request on its own raw connection; the response as read from the wire.
    func sendRaw(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> ClientResponse {
        let connection = try connect()
        try connection.sendRequest(method, target, headers: headers, body: body)
        return try connection.readResponse(toHead: method == "HEAD")
    }
}
