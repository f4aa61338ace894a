import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import MishapFuzzSupport
import Synchronization

// What the HTTP fuzz test needs beyond the harness (its seeded generator is MishapFuzzSupport's):
// a raw socket that can half-close and reset, a strict reader of HTTP/1.x responses, and a count
// of the server's open connections.

/// A blocking TCP connection to 127.0.0.1 for sending arbitrary bytes: writes in pieces,
/// half-closes, resets, and reads with a deadline (a server that neither answers nor closes is
/// reported, never waited on forever).
final class FuzzSocket {
    /// How reading ended.
    enum End: Equatable, CustomStringConvertible {
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

        var description: String {
            switch self {
            case .closed: return "closed"
            case .reset: return "reset"
            case .failed(let code): return "receive error \(code) (\(String(cString: strerror(code))))"
            case .timedOut: return "timed out"
            case .satisfied: return "open"
            }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private var descriptor: Int32

    init(port: UInt16) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        var one: Int32 = 1
        // Each write leaves as its own segment, so requests split over writes arrive split.
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw Failure(description: "connect() to 127.0.0.1:\(port) failed: errno \(code)")
        }
        descriptor = fd
    }

    deinit { close() }

    /// Writes every byte; nil, or the errno that stopped it (EPIPE or ECONNRESET once the server
    /// has closed, EAGAIN when it stopped reading for 5 s).
    func write(_ bytes: [UInt8]) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }

    /// Ends the sending side (the server reads EOF); receiving goes on.
    func shutdownWrite() {
        _ = shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Closes with a TCP reset instead of a FIN (linger 0), as a crashed or killed client does.
    func abort() {
        guard descriptor >= 0 else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    /// Appends what arrives to `received` until `enough(received)` holds, the stream ends, or
    /// `deadline` passes.
    func read(into received: inout [UInt8], until deadline: ContinuousClock.Instant,
              enough: ([UInt8]) -> Bool = { _ in false }) -> End {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if enough(received) { return .satisfied }
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return .timedOut }
            var descriptorToPoll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            let ready = poll(&descriptorToPoll, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { continue }
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                received += chunk[..<count]
                continue
            }
            if count == 0 { return .closed }
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { continue }
            return code == ECONNRESET ? .reset : .failed(errno: code)
        }
    }
}

/// One HTTP/1.x response exactly as read from the wire.
struct WireResponse {
    var version: String
    var status: Int
    var reason: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The first value of a header, its name compared without regard to case.
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Whether any header has this name.
    func has(_ name: String) -> Bool { header(name) != nil }

    /// 1xx: an interim response, before the final one.
    var isInterim: Bool { (100...199).contains(status) }

    /// The server said it closes the connection after this response.
    var announcesClose: Bool {
        let connection = headers.filter { $0.name.caseInsensitiveCompare("Connection") == .orderedSame }
            .flatMap { $0.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() } }
        if connection.contains("close") { return true }
        return version == "HTTP/1.0" && !connection.contains("keep-alive")
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A strict reader of a stream of HTTP/1.x responses (RFC 9112): a status line, header fields
/// whose names are tokens and whose values hold no control characters but HTAB, every line
/// ended by CRLF, and a body framed by `Content-Length`, by chunked coding, or by the end of
/// the stream. Anything else is reported as malformed.
enum WireReader {
    struct Stream {
        /// Every response complete on the wire, interim ones included.
        var responses: [WireResponse] = []
        /// Bytes after the last complete response that do not (yet) form one.
        var leftover: [UInt8] = []
        /// Why the bytes are not HTTP, when they are not.
        var problem: String?

        /// Final (non-1xx) responses.
        var finalCount: Int { responses.count(where: { !$0.isInterim }) }
    }

    private enum Step {
        case complete(WireResponse, consumed: Int)
        case incomplete
        case malformed(String)
    }

    /// Reads `bytes` as consecutive responses. `isHead(n)` says whether the n-th final response
    /// answers a HEAD request (no body follows its head); `atEnd` whether the server has closed,
    /// which ends a body without framing.
    static func read(_ bytes: [UInt8], atEnd: Bool, isHead: (Int) -> Bool = { _ in false }) -> Stream {
        var stream = Stream()
        var offset = 0
        while offset < bytes.count {
            let step = readOne(bytes[offset...], atEnd: atEnd, isHead: isHead(stream.finalCount))
            switch step {
            case .complete(let response, let consumed):
                stream.responses.append(response)
                offset += consumed
                if !response.isInterim && response.announcesClose && offset < bytes.count {
                    stream.problem = "\(bytes.count - offset) bytes after a response that announced the connection closes"
                    stream.leftover = Array(bytes[offset...])
                    return stream
                }
            case .incomplete:
                stream.leftover = Array(bytes[offset...])
                return stream
            case .malformed(let why):
                stream.problem = why
                stream.leftover = Array(bytes[offset...])
                return stream
            }
        }
        return stream
    }

    private static let crlf: [UInt8] = [0x0D, 0x0A]

    /// The largest head accepted before the bytes are declared not HTTP.
    static let maxHeadBytes = 64 << 10

    private static func readOne(_ bytes: ArraySlice<UInt8>, atEnd: Bool, isHead: Bool) -> Step {
        let start = bytes.startIndex
        // A response must begin like one; garbage is reported at once, not waited on.
        let prefix = Array("HTTP/1.".utf8)
        let known = min(prefix.count, bytes.count)
        guard bytes.prefix(known).elementsEqual(prefix.prefix(known)) else {
            return .malformed("does not start with a status line: \(printable(bytes.prefix(40)))")
        }
        var lines: [ArraySlice<UInt8>] = []
        var cursor = start
        while true {
            guard let lineEnd = find(crlf, in: bytes, from: cursor) else {
                if let stray = bytes[cursor...].firstIndex(where: { $0 == 0x0A || $0 == 0x00 }) {
                    return .malformed("bare LF or NUL in the head: \(printable(bytes[cursor..<min(stray + 20, bytes.endIndex)]))")
                }
                if bytes.count > maxHeadBytes { return .malformed("a head longer than \(maxHeadBytes) bytes") }
                return .incomplete
            }
            let line = bytes[cursor..<lineEnd]
            cursor = lineEnd + 2
            if line.isEmpty { break }
            lines.append(line)
        }
        guard let statusLine = lines.first else { return .malformed("an empty line where a status line belongs") }
        guard let (version, status, reason) = parseStatusLine(statusLine) else {
            return .malformed("bad status line: \(printable(statusLine))")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let header = parseHeader(line) else { return .malformed("bad header line: \(printable(line))") }
            headers.append(header)
        }
        var response = WireResponse(version: version, status: status, reason: reason, headers: headers, body: [])

        let lengths = headers.filter { $0.name.caseInsensitiveCompare("Content-Length") == .orderedSame }.map(\.value)
        let codings = headers.filter { $0.name.caseInsensitiveCompare("Transfer-Encoding") == .orderedSame }
            .flatMap { $0.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() } }
        if !lengths.isEmpty && !codings.isEmpty { return .malformed("both Content-Length and Transfer-Encoding") }
        var length: Int?
        for value in lengths {
            guard !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), value.count < 12, let parsed = Int(value) else {
                return .malformed("bad Content-Length '\(value)'")
            }
            if let length, length != parsed { return .malformed("differing Content-Length values \(lengths)") }
            length = parsed
        }

        let headEnd = cursor
        if response.isInterim || status == 204 || status == 304 || isHead {
            if response.isInterim && (!lengths.isEmpty || !codings.isEmpty) { return .malformed("an interim response with a body") }
            return .complete(response, consumed: headEnd - start)
        }
        if !codings.isEmpty {
            guard codings.last == "chunked" else { return .malformed("Transfer-Encoding \(codings) does not end in chunked") }
            switch readChunked(bytes, from: headEnd) {
            case .success(let (body, end))?:
                response.body = body
                return .complete(response, consumed: end - start)
            case .failure(let problem)?:
                return .malformed(problem.description)
            case nil:
                return .incomplete
            }
        }
        if let length {
            guard bytes.endIndex - headEnd >= length else { return .incomplete }
            response.body = Array(bytes[headEnd..<headEnd + length])
            return .complete(response, consumed: headEnd + length - start)
        }
        // No framing: the body runs to the end of the stream.
        guard atEnd else { return .incomplete }
        response.body = Array(bytes[headEnd...])
        return .complete(response, consumed: bytes.endIndex - start)
    }

    private static func parseStatusLine(_ line: ArraySlice<UInt8>) -> (String, Int, String)? {
        let bytes = Array(line)
        guard bytes.count >= 13 else { return nil }
        let version = String(decoding: bytes[0..<8], as: UTF8.self)
        guard version == "HTTP/1.1" || version == "HTTP/1.0", bytes[8] == 0x20, bytes[12] == 0x20 else { return nil }
        guard bytes[9...11].allSatisfy({ (0x30...0x39).contains($0) }), let status = Int(String(decoding: bytes[9...11], as: UTF8.self)),
              (100...599).contains(status) else { return nil }
        let reason = bytes[13...]
        guard reason.allSatisfy(isFieldByte) else { return nil }
        return (version, status, String(decoding: reason, as: UTF8.self))
    }

    /// `name: value` with a token name and a value of visible characters, spaces, tabs and
    /// obs-text (RFC 9110 5.5), no control character but HTAB, and no line folding.
    private static func parseHeader(_ line: ArraySlice<UInt8>) -> (name: String, value: String)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else { return nil }
        let value = line[(colon + 1)...]
        guard value.allSatisfy(isFieldByte) else { return nil }
        let trimmed = String(decoding: value, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        return (String(decoding: name, as: UTF8.self), trimmed)
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    static func isFieldByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x7E).contains(byte) || byte >= 0x80
    }

    private struct ChunkProblem: Error, CustomStringConvertible { let description: String }

    /// A chunked body from `offset`: the body and where it ends, a problem, or nil when more
    /// bytes are needed.
    private static func readChunked(_ bytes: ArraySlice<UInt8>, from offset: Int) -> Result<([UInt8], Int), ChunkProblem>? {
        var body: [UInt8] = []
        var cursor = offset
        while true {
            guard let lineEnd = find(crlf, in: bytes, from: cursor) else {
                return bytes.endIndex - cursor > 1024 ? .failure(ChunkProblem(description: "chunk size line too long")) : nil
            }
            let line = bytes[cursor..<lineEnd]
            let sizeText = line.prefix { $0 != UInt8(ascii: ";") }
            guard !sizeText.isEmpty, sizeText.count <= 15,
                  let size = Int(String(decoding: sizeText, as: UTF8.self), radix: 16), size >= 0 else {
                return .failure(ChunkProblem(description: "bad chunk size line: \(printable(line))"))
            }
            cursor = lineEnd + 2
            if size == 0 {
                // Trailer fields, then an empty line.
                while true {
                    guard let end = find(crlf, in: bytes, from: cursor) else { return nil }
                    let trailer = bytes[cursor..<end]
                    cursor = end + 2
                    if trailer.isEmpty { return .success((body, cursor)) }
                    if parseHeader(trailer) == nil {
                        return .failure(ChunkProblem(description: "bad trailer line: \(printable(trailer))"))
                    }
                }
            }
            guard bytes.endIndex - cursor >= size + 2 else { return nil }
            body += bytes[cursor..<cursor + size]
            cursor += size
            guard bytes[cursor] == 0x0D, bytes[cursor + 1] == 0x0A else {
                return .failure(ChunkProblem(description: "chunk data not followed by CRLF"))
            }
            cursor += 2
        }
    }

    private static func find(_ needle: [UInt8], in bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        guard bytes.endIndex - start >= needle.count else { return nil }
        var index = start
        while index <= bytes.endIndex - needle.count {
            if bytes[index] == needle[0] && bytes[index + 1] == needle[1] { return index }
            index += 1
        }
        return nil
    }
}

/// Bytes for a failure message: printable ASCII as is, the rest as `\xNN`, cut to `limit`.
func printable<C: Collection>(_ bytes: C, limit: Int = 240) -> String where C.Element == UInt8 {
    var text = ""
    for byte in bytes.prefix(limit) {
        switch byte {
        case 0x0D: text += "\\r"
        case 0x0A: text += "\\n"
        case 0x5C: text += "\\\\"
        case 0x20...0x7E: text.append(Character(Unicode.Scalar(byte)))
        default: text += String(format: "\\x%02X", byte)
        }
    }
    return bytes.count > limit ? text + "… (\(bytes.count) bytes)" : text
}

/// The server's side of its open connections: sockets of this process whose local port is
/// `port`, the listening one excluded. Clients in the same process use other local ports, so
/// neither they nor other tests' servers are counted.
func openServerConnections(port: UInt16) -> Int {
    var inodes = Set<Substring>()
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    for fd in fds {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd),
              target.hasPrefix("socket:[") else { continue }
        inodes.insert(Substring(target.dropFirst(8).dropLast()))
    }
    let portHex = String(format: ":%04X", port)
    var count = 0
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
        for line in text.split(separator: "\n").dropFirst() {
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            // sl, local_address, rem_address, st, tx:rx, tr:when, retrnsmt, uid, timeout, inode
            guard columns.count > 9, columns[1].hasSuffix(portHex), columns[3] != "0A",
                  inodes.contains(columns[9]) else { continue }
            count += 1
        }
    }
    return count
}

/// Open descriptors of this process (all kinds), for the report.
func openDescriptorCount() -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
}

/// The lines libmicrohttpd logs through the server's logger (at debug level), counted by
/// message: what it refused, and whether the application ever failed a request.
final class DaemonLog: Sendable {
    private let lines = Mutex<[String: Int]>([:])

    /// A logger for `HTTPServer` that records every message.
    var logger: Logger {
        var logger = Logger(label: "mishap.server") { _ in Handler(log: self) }
        logger.logLevel = .debug
        return logger
    }

    var counts: [String: Int] { lines.withLock { $0 } }

    /// Messages containing `text`, in total.
    func count(containing text: String) -> Int {
        lines.withLock { $0.filter { $0.key.contains(text) }.values.reduce(0, +) }
    }

    fileprivate func record(_ message: String) {
        lines.withLock { $0[message, default: 0] += 1 }
    }

    private struct Handler: LogHandler {
        let log: DaemonLog
        var logLevel: Logger.Level = .debug
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            log.record("\(event.message)")
        }
    }
}
