import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An upstream server on 127.0.0.1 that answers with bytes a test writes by hand: what no real
/// server sends (a folded header line, a bare CR, a `101` out of nowhere), or a large body
/// written slowly. It keeps every request head exactly as it arrived (the request line with its
/// target as sent, then the header lines), so a test sees what Mishap put on the wire.
///
/// Each connection is served on a thread of its own, one request per connection (the answer is
/// followed by a close unless the script says otherwise). Stopped when released.
public final class ScriptedUpstream: @unchecked Sendable {
    /// One request as it arrived.
    public struct Received: Sendable {
        /// `GET /base/a?x=1 HTTP/1.1`, byte for byte.
        public let requestLine: String
        /// The header lines, in order, as `name: value` split at the first colon.
        public let headers: [(name: String, value: String)]
        /// The target of the request line.
        public var target: String { requestLine.split(separator: " ").dropFirst().first.map(String.init) ?? "" }

        /// The first header called `name` (any case).
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// What to send to a connection that sent `Received`: bytes written in order, each piece
    /// after its pause (so a slow upstream can be played).
    public typealias Script = @Sendable (Received) -> [(pauseMilliseconds: Int, bytes: [UInt8])]

    private let listener: Int32
    /// The port listened on.
    public let port: UInt16
    private let script: Script
    private let received = Mutex<[Received]>([])
    private let stopped = Atomic<Bool>(false)

    /// Listens on a free loopback port and answers each request with `script`'s bytes.
    public init(script: @escaping Script) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPConnection.Failure(description: "socket() failed", errno: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address -> Bool in
                bind(fd, address, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw RawHTTPConnection.Failure(description: "bind/listen failed", errno: errno)
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        self.script = script
        let thread = Thread { [self] in acceptLoop() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// A simple answer: a status line, header lines and a body, written at once, then a close.
    public convenience init(rawHead: String, body: [UInt8] = []) throws {
        try self.init { _ in [(0, Array(rawHead.utf8) + body)] }
    }

    deinit { stop() }

    /// Stops accepting; connections being served finish their script.
    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    /// The URL of this upstream, `http://127.0.0.1:PORT`, and `path` after it.
    public func url(_ path: String = "") -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The requests received so far, oldest first.
    public var requests: [Received] { received.withLock { $0 } }

    private func acceptLoop() {
        while !stopped.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let thread = Thread { [self] in serve(client) }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { Glibc.close(client) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let end = Array("\r\n\r\n".utf8)
        while bytes.count < 1 << 20 {
            if let range = bytes.firstRange(of: end) {
                let head = String(decoding: bytes[..<range.lowerBound], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let requestLine = lines.removeFirst()
                let headers = lines.compactMap { line -> (name: String, value: String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }
                let request = Received(requestLine: requestLine, headers: headers)
                // Whatever body came is read and left alone.
                let length = request.header("Content-Length").flatMap(Int.init) ?? 0
                var bodyLeft = length - (bytes.count - range.upperBound)
                while bodyLeft > 0 {
                    let count = recv(client, &buffer, min(buffer.count, bodyLeft), 0)
                    if count <= 0 { break }
                    bodyLeft -= count
                }
                received.withLock { $0.append(request) }
                for (pause, piece) in script(request) {
                    if pause > 0 { usleep(UInt32(pause) * 1000) }
                    var offset = 0
                    while offset < piece.count {
                        let written = piece[offset...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                        if written <= 0 { return }
                        offset += written
                    }
                }
                return
            }
            let count = recv(client, &buffer, buffer.count, 0)
            if count <= 0 { return }
            bytes += buffer[..<count]
        }
    }
}
