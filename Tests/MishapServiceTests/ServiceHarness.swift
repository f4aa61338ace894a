import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Logging
import MishapEngine
import MishapHTTP
import MishapService
import Testing

/// A `MishapService` served by a real `HTTPServer` on 127.0.0.1 and a free port, in process:
/// the service answers (and observes) every request, as `mishap serve` wires it.
final class ServiceHarness: Sendable {
    let service: MishapService
    let server: HTTPServer
    let baseURL: String

    convenience init(yaml: String, name: String = "t.yaml", options: ServiceOptions = ServiceOptions(),
                     logger: Logger = quietLogger) throws {
        try self.init(service: MishapService(source: .yaml(yaml, name: name), options: options, logger: logger))
    }

    convenience init(directory: String, options: ServiceOptions = ServiceOptions(), logger: Logger = quietLogger) throws {
        try self.init(service: MishapService(source: .directory(directory), options: options, logger: logger))
    }

    init(service: MishapService) throws {
        self.service = service
        server = HTTPServer(configuration: ServerConfiguration(port: 0, threads: 2), responder: service, observer: service)
        try server.start()
        baseURL = server.url!
    }

    deinit { server.stop() }

    var port: UInt16 { UInt16(baseURL.split(separator: ":").last!)! }

    /// Sends a request with URLSession and returns what the client sees.
    func send(_ method: String = "GET", _ pathAndQuery: String, body: [UInt8]? = nil,
              headers: [String: String] = [:]) async throws -> ClientResponse {
        var request = URLRequest(url: URL(string: baseURL + pathAndQuery)!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0) }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await testSession.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields { fields["\(key)"] = "\(value)" }
        return ClientResponse(status: http.statusCode, headers: fields, body: data)
    }

    /// `GET` with an optional session header.
    func get(_ pathAndQuery: String, session: String? = nil) async throws -> ClientResponse {
        try await send("GET", pathAndQuery, headers: session.map { ["X-Mishap-Session": $0] } ?? [:])
    }

    /// An admin call that must answer 200 with a JSON object.
    func admin(_ pathAndQuery: String, method: String = "GET",
               sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let response = try await send(method, "/__mishap/" + pathAndQuery)
        #expect(response.status == 200, "\(method) /__mishap/\(pathAndQuery): \(response.text)", sourceLocation: sourceLocation)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8", sourceLocation: sourceLocation)
        return try #require(response.json, "not a JSON object: \(response.text)", sourceLocation: sourceLocation)
    }

    /// The journal entries `GET /__mishap/requests?QUERY` returns.
    func journal(_ query: String = "", sourceLocation: SourceLocation = #_sourceLocation) async throws -> [[String: Any]] {
        let answer = try await admin("requests" + (query.isEmpty ? "" : "?" + query), sourceLocation: sourceLocation)
        return try #require(answer["requests"] as? [[String: Any]], sourceLocation: sourceLocation)
    }
}

/// A logger that writes nothing (request lines and reload errors would flood the test output).
let quietLogger = Logger(label: "mishap") { _ in SwiftLogNoOpLogHandler() }

/// What a client observed.
struct ClientResponse: Sendable {
    let status: Int
    let headers: [String: String]
    var body: Data

    func header(_ name: String) -> String? {
        headers.first(where: { $0.key.caseInsensitiveCompare(name) == .orderedSame })?.value
    }

    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// One URLSession for the test process, without caches or cookies.
let testSession: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.timeoutIntervalForRequest = 10
    return URLSession(configuration: configuration)
}()

/// Runs blocking work (sockets, `stop(grace:)`) on a thread of its own, so waiting does not
/// hold one of the few threads of Swift's cooperative pool.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 1 << 20
        thread.start()
    }
}

/// Polls `condition` every 10 ms until it holds; false when `timeout` passes first.
func eventually(within timeout: Duration = .seconds(2), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
}

/// A field list from the journal's JSON (`[["name", "value"], ...]`) as pairs.
func pairs(_ value: Any?) -> [[String]] {
    (value as? [[Any]])?.map { $0.map { "\($0)" } } ?? []
}

/// A fresh temporary folder, removed by `remove()`.
struct TemporaryFolder: Sendable {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/mishap-service-XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw POSIXError(.EIO) }
        path = String(cString: created)
    }

    /// Writes `text` to `name` in place (no temporary file), as a plain `>` redirection would.
    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + name))
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// The read end of a pipe whose write end a log handler writes to.
final class LogPipe: @unchecked Sendable {
    let readEnd: Int32
    let writeEnd: Int32
    private var pending: [UInt8] = []

    init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        readEnd = fds[0]
        writeEnd = fds[1]
        _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// The next complete line, or nil when none arrives within `timeout`.
    func nextLine(timeout: Duration = .seconds(2)) -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeFirst(newline + 1)
                return line
            }
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return nil }
            var descriptor = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000) + 1
            if poll(&descriptor, 1, milliseconds) <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count > 0 { pending += chunk[..<count] }
        }
    }

    /// Parses a line as a JSON object.
    static func object(_ line: String?) -> [String: Any]? {
        line.flatMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }
}

/// A plain blocking TCP connection to 127.0.0.1 with a receive timeout, for what URLSession
/// hides: a request held by the server while it stops, and connection refusals.
final class RawHTTPConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        var errno: Int32 = 0
    }

    private let descriptor: Int32
    private var pending: [UInt8] = []

    init(port: UInt16, timeoutSeconds: Int = 10) throws {
        // `descriptor` is set only once connected: a class whose initializer throws after every
        // stored property is set runs `deinit`, which would close the socket a second time
        // (by then perhaps another thread's newly opened descriptor).
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
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
            close(fd)
            throw Failure(description: "connect() to 127.0.0.1:\(port) failed: errno \(code)", errno: code)
        }
        descriptor = fd
    }

    deinit { close(descriptor) }

    func sendRequest(_ method: String, _ target: String, headers: [(String, String)] = []) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let bytes = Array((head + "\r\n").utf8)
        let written = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard written == bytes.count else { throw Failure(description: "send() failed: errno \(errno)") }
    }

    /// Reads one response (head and `Content-Length` bytes of body).
    func readResponse() throws -> ClientResponse {
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
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "not a status line: \(head)") }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var response = ClientResponse(status: status, headers: headers, body: Data())
        let length = Int(response.header("Content-Length") ?? "0") ?? 0
        while pending.count < length { try receiveMore() }
        response.body = Data(pending[..<length])
        pending.removeFirst(length)
        return response
    }

    /// Reads until the server closes (or resets) the connection; the bytes received.
    func readToEnd() throws -> [UInt8] {
        while true {
            var chunk = [UInt8](repeating: 0, count: 65536)
            let received = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if received > 0 { pending += chunk[..<received]; continue }
            if received == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { defer { pending = [] }; return pending }
            throw Failure(description: "recv() timed out: the server neither answered nor closed")
        }
    }

    private func receiveMore() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let received = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if received < 0 { throw Failure(description: "recv() failed or timed out: errno \(errno)", errno: errno) }
        if received == 0 { throw Failure(description: "connection closed after \(pending.count) unread bytes") }
        pending += chunk[..<received]
    }
}
