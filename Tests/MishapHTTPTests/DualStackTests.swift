import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MishapHTTP
import MishapTestSupport
import Testing

/// `--host ::` serves IPv4 and IPv6 clients, as `::` does on most servers (phones on Wi-Fi often
/// reach a laptop over IPv4 only); a specific IPv6 address serves IPv6 only. Skipped on a
/// machine without an IPv6 loopback.
@Suite(.enabled(if: hasIPv6Loopback, "this machine has no IPv6 loopback (::1)"), .onBlockingThreads)
struct DualStackTests {
    @Test func theIPv6AnyAddressAnswersOverIPv4AndIPv6() throws {
        let recording = try RecordingServer(host: "::")
        let overIPv4 = try RawHTTPConnection(port: recording.port, host: "127.0.0.1", timeoutSeconds: 5)
        try overIPv4.sendRequest("GET", "/over?v=4")
        let answer4 = try overIPv4.readResponse()
        #expect(answer4.status == 200)
        // An IPv4 client of a dual-stack socket is ::ffff:127.0.0.1, still on this machine.
        #expect(answer4.json?["fromLoopback"] as? Bool == true, "\(answer4.text)")

        let answer6 = try Self.requestOverIPv6(port: recording.port, target: "/over?v=6")
        #expect(answer6.hasPrefix("HTTP/1.1 200"), "\(answer6)")
        #expect(answer6.contains(#""fromLoopback":true"#), "\(answer6)")
        #expect(recording.responder.requests.map(\.path) == ["/over", "/over"])
    }

    @Test func aSpecificIPv6AddressServesIPv6Only() throws {
        let recording = try RecordingServer(host: "::1")
        let answer6 = try Self.requestOverIPv6(port: recording.port, target: "/only6")
        #expect(answer6.hasPrefix("HTTP/1.1 200"), "\(answer6)")
        // Over IPv4 the port is not this server's: refused, or, when a server of another test
        // holds the same port number on 127.0.0.1, answered by that one, never by this.
        if let other = try? RawHTTPConnection(port: recording.port, host: "127.0.0.1", timeoutSeconds: 5) {
            try? other.sendRequest("GET", "/only4", headers: [("Connection", "close")])
            _ = try? other.readUntilEnd()
        }
        #expect(recording.responder.requests.map(\.path) == ["/only6"])
    }

    /// The admin API answers loopback clients only: an IPv4 one on `::` is one.
    @Test func theAdminAPIAnswersAnIPv4LoopbackClientOnTheAnyAddress() throws {
        let server = try TestServer(configuration: ServerConfiguration(host: "::", port: 0))
        let connection = try RawHTTPConnection(port: server.port, host: "127.0.0.1", timeoutSeconds: 5)
        try connection.sendRequest("GET", "/__mishap/health")
        let answer = try connection.readResponse()
        #expect(answer.status == 200, "\(answer.text)")
    }

    // MARK: IPv6 client

    static func loopback6(port: UInt16) -> sockaddr_in6 {
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        address.sin6_addr = in6addr_loopback
        return address
    }

    /// One request over [::1]:`port` with `Connection: close`; everything the server sent.
    static func requestOverIPv6(port: UInt16, target: String) throws -> String {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw IPv6Failure("socket(AF_INET6) failed: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = loopback6(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        }
        guard connected == 0 else { throw IPv6Failure("connect() to [::1]:\(port) failed: errno \(errno)") }
        let request = Array("GET \(target) HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            throw IPv6Failure("send() failed: errno \(errno)")
        }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { received += chunk[..<count]; continue }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw IPv6Failure("recv() failed: errno \(errno)") }
            return String(decoding: received, as: UTF8.self)
        }
    }
}

/// Why a request over IPv6 failed.
struct IPv6Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Whether a socket can be bound to ::1.
let hasIPv6Loopback: Bool = {
    let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = DualStackTests.loopback6(port: 0)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
    } == 0
}()
