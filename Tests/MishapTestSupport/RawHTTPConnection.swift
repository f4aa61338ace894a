import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to 127.0.0.1, for what URLSession hides: several requests on one
/// connection, the `Connection` header, a HEAD response's (absent) body, bytes exactly as sent,
/// how the server ends the stream (a close or a reset), half-closes and resets from the client.
///
/// Blocking POSIX calls with send and receive timeouts, or reads against a deadline, so a server
/// that never answers fails the test instead of hanging it. One thread uses a connection at a
/// time.
public final class RawHTTPConnection {
    /// Why a connection, a send or a receive failed.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        /// The `errno` behind it, when there is one (`ECONNREFUSED` for a refused connection).
        public var errno: Int32 = 0
    }

    /// What one receive brought: bytes, the server's clean close (EOF), or a failure such as a
    /// reset (`ECONNRESET`). A receive timeout is thrown, not returned.
    public enum Received: Equatable, Sendable, CustomStringConvertible {
        case bytes([UInt8])
        case closed
        case failed(errno: Int32)

        public var description: String {
            switch self {
            case .bytes(let bytes): "\(bytes.count) bytes"
            case .closed: "EOF"
            case .failed(let code): "error \(code) (\(String(cString: strerror(code))))"
            }
        }
    }

    /// How a read against a deadline (`read(into:until:enough:)`) ended.
    public enum End: Equatable, Sendable, CustomStringConvertible {
        /// The server closed its side (EOF).
        case closed
        /// The server reset the connection (ECONNRESET).
        case reset
        /// Another receive error.
        case failed(errno: Int32)
        /// The deadline passed with the connection still open.
        case timedOut
        /// The reader had what it wanted; the connection is still open.
        case satisfied

        public var description: String {
            switch self {
            case .closed: "closed"
            case .reset: "reset"
            case .failed(let code): "receive error \(code) (\(String(cString: strerror(code))))"
            case .timedOut: "timed out"
            case .satisfied: "open"
            }
        }
    }

    private var descriptor: Int32
    /// Bytes received but not yet consumed by a response.
    private var pending: [UInt8] = []

    /// Connects to `host:port` (an IPv4 address, loopback by default); sends and receives give
    /// up after `timeoutSeconds`. With `noDelay`, each write leaves as its own segment, so bytes
    /// split over writes arrive split.
    public init(port: UInt16, host: String = "127.0.0.1", timeoutSeconds: Int = 10, noDelay: Bool = false) throws {
        // `descriptor` is set only once connected: a class whose initializer throws after every
        // stored property is set runs `deinit`, which would close the socket a second time
        // (by then perhaps another thread's newly opened descriptor).
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed: errno \(Glibc.errno)", errno: Glibc.errno) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if noDelay {
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr(host)
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = Glibc.errno
            Glibc.close(fd)
            throw Failure(description: "connect() to \(host):\(port) failed: errno \(code)", errno: code)
        }
        descriptor = fd
    }

    deinit { close() }

    /// Closes the connection (a FIN); idempotent.
    public func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    /// Closes with a TCP reset instead of a FIN (linger 0), as a crashed or killed client does.
    public func abort() {
        guard descriptor >= 0 else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// Ends the sending side (the server reads EOF); receiving goes on.
    public func shutdownWrite() {
        _ = shutdown(descriptor, Int32(SHUT_WR))
    }

    /// From now on, receives give up after `seconds`.
    public func setReceiveTimeout(seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    // MARK: Sending

    /// Writes every byte; nil, or the errno that stopped it (EPIPE or ECONNRESET once the server
    /// has closed, EAGAIN when it stopped reading for the send timeout).
    public func write(_ bytes: [UInt8]) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if Glibc.errno == EINTR { continue }
                return Glibc.errno
            }
            offset += written
        }
        return nil
    }

    /// Writes every byte, or throws.
    public func send(_ bytes: [UInt8]) throws {
        if let code = write(bytes) { throw Failure(description: "send() failed: errno \(code)", errno: code) }
    }

    /// Writes the UTF-8 bytes of `text`, or throws.
    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Sends one HTTP/1.1 request. A `Content-Length` is added when there is a body.
    public func sendRequest(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws {
        try send(Self.request(method, target, headers: headers, body: body))
    }

    /// The bytes of one HTTP/1.1 request.
    public static func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) -> [UInt8] {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    // MARK: Reading responses

    /// Reads one complete response: the head, then `Content-Length` bytes of body (none after a
    /// HEAD request, whose Content-Length describes the body a GET would get).
    public func readResponse(toHead: Bool = false) throws -> ClientResponse {
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

    /// Everything the server sends until it closes the connection cleanly (a reset is thrown).
    public func readToEnd() throws -> [UInt8] {
        while try receiveMore(allowEnd: true) {}
        defer { pending = [] }
        return pending
    }

    /// Bytes already read past a response's head (by `readResponse(toHead: true)`), else one
    /// receive.
    public func receivePiece() throws -> Received {
        if !pending.isEmpty {
            defer { pending = [] }
            return .bytes(pending)
        }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let received = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if received > 0 { return .bytes(Array(chunk[..<received])) }
            if received == 0 { return .closed }
            let code = Glibc.errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {
                throw Failure(description: "recv() timed out: the server neither answered nor closed", errno: code)
            }
            return .failed(errno: code)
        }
    }

    /// Everything until the stream ends, piece by piece with the time each arrived, and how it
    /// ended (`.closed` or `.failed`).
    public func readPiecesToEnd() throws -> (pieces: [(bytes: [UInt8], at: ContinuousClock.Instant)], end: Received) {
        var pieces: [(bytes: [UInt8], at: ContinuousClock.Instant)] = []
        while true {
            let piece = try receivePiece()
            guard case .bytes(let bytes) = piece else { return (pieces, piece) }
            pieces.append((bytes, ContinuousClock.now))
        }
    }

    /// Everything until the stream ends, and how it ended (`.closed` or `.failed`).
    public func readUntilEnd() throws -> (bytes: [UInt8], end: Received) {
        let (pieces, end) = try readPiecesToEnd()
        return (pieces.flatMap(\.bytes), end)
    }

    /// What comes after a response's head until the stream ends or `deadline` passes, and how
    /// it ended (`.closed`, `.reset`, `.failed`, `.timedOut`).
    public func restOfStream(until deadline: ContinuousClock.Instant) throws -> (bytes: [UInt8], end: End) {
        var received: [UInt8] = []
        switch try receivePiece() {
        case .bytes(let bytes): received = bytes
        case .closed: return (received, .closed)
        case .failed(let code): return (received, code == ECONNRESET ? .reset : .failed(errno: code))
        }
        // Read first, then return: `return (received, read(into: &received, ...))` would make
        // the tuple with the bytes as they were before the read (the first piece alone).
        let end = read(into: &received, until: deadline)
        return (received, end)
    }

    /// Whether response bytes (or the end of the stream) are waiting, without consuming them or
    /// blocking.
    public var hasSomethingToRead: Bool {
        if !pending.isEmpty { return true }
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0
    }

    /// Appends what the socket has to `pending`; false at the end of the stream.
    @discardableResult
    private func receiveMore(allowEnd: Bool = false) throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let received = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if received < 0 && Glibc.errno == EINTR { continue }
            if received < 0 {
                throw Failure(description: "recv() failed or timed out: errno \(Glibc.errno)", errno: Glibc.errno)
            }
            if received == 0 {
                if allowEnd { return false }
                throw Failure(description: "connection closed after \(pending.count) unread bytes")
            }
            pending += chunk[..<received]
            return true
        }
    }

    // MARK: Reading against a deadline

    /// Appends what arrives to `received` until `enough(received)` holds, the stream ends, or
    /// `deadline` passes. Independent of the receive timeout and of `readResponse`.
    public func read(into received: inout [UInt8], until deadline: ContinuousClock.Instant,
                     enough: ([UInt8]) -> Bool = { _ in false }) -> End {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if enough(received) { return .satisfied }
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return .timedOut }
            var descriptorToPoll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            let ready = poll(&descriptorToPoll, 1, milliseconds)
            if ready < 0 && Glibc.errno == EINTR { continue }
            if ready <= 0 { continue }
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                received += chunk[..<count]
                continue
            }
            if count == 0 { return .closed }
            let code = Glibc.errno
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { continue }
            return code == ECONNRESET ? .reset : .failed(errno: code)
        }
    }
}
