import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Security defaults and connection limits of the real `mishap` binary: the admin token, the
/// admin API for clients on other machines, `--connection-limit` and `--connection-timeout`.
@Suite("mishap limits and admin token", .onBlockingThreads)
struct LimitsTests {
    /// This machine's first IPv4 address that is not loopback (a client connecting to it is
    /// "another machine" to the server), or nil when it has none.
    static let externalAddress: String? = {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                  current.pointee.ifa_flags & UInt32(IFF_UP) != 0,
                  current.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0 else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count),
                              nil, 0, NI_NUMERICHOST) == 0 else { continue }
            return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }()

    /// Starts `mishap serve` on a free port with the default scenarios and `arguments`
    /// (`ChildProcess.serving`), and returns it with its port (whatever the host).
    static func serve(_ arguments: [String], environment: [String: String] = [:],
                      sourceLocation: SourceLocation = #_sourceLocation) async throws -> (ChildProcess, UInt16) {
        let (server, _, port) = try await ChildProcess.serving(["serve", "--port", "0", "--scenarios", Paths.scenarios] + arguments,
                                                               environment: environment, sourceLocation: sourceLocation)
        return (server, port)
    }

    static func curl(_ url: String, _ extra: [String] = []) async throws -> (status: Int?, body: String) {
        try await ServeTests.curl(url, extra: extra)
    }

    @Test("Bound to 0.0.0.0 without a token: a warning; other machines get the scenarios but 403 from the admin API",
          .enabled(if: externalAddress != nil, "needs an address other than loopback"))
    func remoteAdminRefusedWithoutToken() async throws {
        let address = try #require(Self.externalAddress)
        let (server, port) = try await Self.serve(["--host", "0.0.0.0"])
        defer { server.kill() }
        let remote = "http://\(address):\(port)"

        let name = try await Self.curl(remote + "/isUserNameAvailable?userName=zaphod")
        #expect(name.status == 200)
        #expect(name.body == #"{"isAvailable":true,"userName":"zaphod"}"#)
        let health = try await Self.curl(remote + "/__mishap/health")
        #expect(health.status == 403)
        #expect(health.body.contains("--admin-token"), "\(health.body)")
        let reset = try await Self.curl(remote + "/__mishap/reset", ["-X", "POST"])
        #expect(reset.status == 403)
        // This machine, through loopback, still may.
        #expect(try await Self.curl("http://127.0.0.1:\(port)/__mishap/health").status == 200)
        #expect(server.standardError.contains("other machines can reach this server (the admin API still answers this machine only)"),
                "\(server.standardError)")
    }

    @Test("With --admin-token (flag or MISHAP_ADMIN_TOKEN), every admin call needs it, from anywhere; status --url presents it",
          arguments: [true, false])
    func adminToken(fromEnvironment: Bool) async throws {
        let token = "t0ken-\(UInt32.random(in: 0...UInt32.max))"
        let (server, port) = try await Self.serve(
            ["--host", Self.externalAddress == nil ? "127.0.0.1" : "0.0.0.0"] + (fromEnvironment ? [] : ["--admin-token", token]),
            environment: fromEnvironment ? ["MISHAP_ADMIN_TOKEN": token] : [:])
        defer { server.kill() }

        var bases = ["http://127.0.0.1:\(port)"]
        if let address = Self.externalAddress { bases.append("http://\(address):\(port)") }
        for base in bases {
            #expect(try await Self.curl(base + "/isUserNameAvailable?userName=abc").status == 400, "\(base)")
            let missing = try await Self.curl(base + "/__mishap/health")
            #expect(missing.status == 401, "\(base)")
            #expect(try await Self.curl(base + "/__mishap/health", ["-H", "Authorization: Bearer nope"]).status == 401)
            #expect(try await Self.curl(base + "/__mishap/requests", ["-H", "X-Mishap-Admin-Token: \(token)x"]).status == 401)
            let health = try await Self.curl(base + "/__mishap/health", ["-H", "Authorization: Bearer \(token)"])
            #expect(health.status == 200, "\(base): \(health.body)")
            #expect(health.body.contains(#""status":"ok""#))
            let requests = try await Self.curl(base + "/__mishap/requests", ["-H", "X-Mishap-Admin-Token: \(token)"])
            #expect(requests.status == 200)

            // The health check of the Docker image: the token from the environment, or the flag.
            let withEnvironment = try await runMishap(["status", "--url", base], environment: ["MISHAP_ADMIN_TOKEN": token])
            #expect(withEnvironment.status == 0, "\(withEnvironment)")
            let withFlag = try await runMishap(["status", "--url", base, "--admin-token", token])
            #expect(withFlag.status == 0, "\(withFlag)")
            // A wrong token: the server is serving all the same, and says it refused the token.
            let without = try await runMishap(["status", "--url", base], environment: ["MISHAP_ADMIN_TOKEN": "wrong"])
            #expect(without.status == 0, "\(without)")
            #expect(without.standardOutput.contains("refused the admin token given"), "\(without.standardOutput)")
        }
        if Self.externalAddress != nil {
            #expect(server.standardError.contains("the admin API answers them with the admin token"), "\(server.standardError)")
        }
    }

    /// Opens a TCP connection to 127.0.0.1:port with a receive timeout.
    static func connect(_ port: UInt16, timeoutSeconds: Int = 10) throws -> RawHTTPConnection {
        try RawHTTPConnection(port: port, timeoutSeconds: timeoutSeconds)
    }

    /// Sends a keep-alive GET and reads the start of its answer; the bytes read ([] when the
    /// server closed the connection, nil on a timeout).
    static func exchange(_ connection: RawHTTPConnection, _ path: String) -> [UInt8]? {
        _ = connection.write(Array("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        return receive(connection)
    }

    static func receive(_ connection: RawHTTPConnection) -> [UInt8]? {
        switch try? connection.receivePiece() {
        case .bytes(let bytes)?: bytes
        case .closed?, .failed(errno: ECONNRESET)?: []
        default: nil
        }
    }

    @Test("--connection-limit: a connection over it waits unanswered until one of the others closes")
    func connectionLimit() async throws {
        let (server, port) = try await Self.serve(["--connection-limit", "2", "--threads", "1"])
        defer { server.kill() }
        let first = try Self.connect(port), second = try Self.connect(port)
        defer { first.close(); second.close() }
        for fd in [first, second] {
            let answer = try #require(Self.exchange(fd, "/isUserNameAvailable?userName=abc"))
            #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 400"))
        }
        // The third is left in the listen queue: no answer while the other two stay open.
        let third = try Self.connect(port, timeoutSeconds: 1)
        defer { third.close() }
        let waiting = Self.exchange(third, "/isUserNameAvailable?userName=abc")
        #expect(waiting == nil, "a third connection was answered or closed: \(String(decoding: waiting ?? [], as: UTF8.self))")

        first.close()
        third.setReceiveTimeout(seconds: 10)
        let answer = try #require(Self.receive(third), "no answer 10 s after a slot freed")
        #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 400"), "\(String(decoding: answer, as: UTF8.self))")
        // The second connection still works.
        let again = try #require(Self.exchange(second, "/isUserNameAvailable?userName=abc"))
        #expect(String(decoding: again, as: UTF8.self).hasPrefix("HTTP/1.1 400"))
    }

    @Test("A connection limit over the open-file limit: the limit is raised where it can be, else lowered with a warning")
    func connectionLimitFitsTheDescriptorLimit() async throws {
        let binary = try #require(Paths.mishap)
        let server = try ChildProcess("/bin/sh", ["-c",
            "ulimit -Sn 200 && ulimit -Hn 200 && exec \"$0\" serve --port 0 --scenarios \"$1\" --connection-limit 4096",
            binary, Paths.scenarios])
        defer { server.kill() }
        let line = try #require(await server.firstOutputLine(timeout: .seconds(30)), "\(server.standardError)")
        let port = try #require(line.split(separator: ":").last.flatMap { UInt16($0) }, "\(line)")
        let answer = try await Self.curl("http://127.0.0.1:\(port)/isUserNameAvailable?userName=abc")
        #expect(answer.status == 400)
        #expect(server.standardError.contains("--connection-limit 4096 does not fit the open-file limit (200); using 136"),
                "\(server.standardError)")
    }

    @Test("--connection-timeout: an idle connection, or one stalled mid-request, is closed; a delayed answer is not cut")
    func connectionTimeout() async throws {
        let (server, port) = try await Self.serve(["--connection-timeout", "1"])
        defer { server.kill() }
        let started = ContinuousClock.now
        let idle = try Self.connect(port)
        defer { idle.close() }
        let stalled = try Self.connect(port)
        defer { stalled.close() }
        let partial = Array("GET /isUserNameAvailable?userName=abc HTTP/1.1\r\nHost: x\r\n".utf8)
        #expect(stalled.write(partial) == nil)
        #expect(Self.receive(idle) == [], "the idle connection was not closed")
        #expect(Self.receive(stalled) == [], "the stalled connection was not closed")
        #expect(ContinuousClock.now - started < .seconds(9))

        // slowpoke answers after 1.5 to 3 s, longer than the timeout: the answer still arrives.
        let slow = try Self.connect(port)
        defer { slow.close() }
        let answer = try #require(Self.exchange(slow, "/isUserNameAvailable?userName=slowpoke"))
        #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 200"), "\(String(decoding: answer, as: UTF8.self))")
    }
}
