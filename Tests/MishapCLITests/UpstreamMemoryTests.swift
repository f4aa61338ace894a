import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--upstream-memory`: what upstream answers hold in a `mishap serve` together, from their
/// first byte received to their last byte sent, however many clients read them slowly. Eight
/// clients ask at once for a 24 MiB answer and read nothing: the answers that fit the budget
/// are held (and sent whole once read), the others are answered 502 saying why, and the
/// server's peak memory (VmHWM in /proc/PID/status) stays within the budget and its own
/// needs. Once read, the memory is free again: the same requests one at a time all pass.
@Suite("Upstream answers held within --upstream-memory", .onBlockingThreads)
struct UpstreamMemoryTests {
    static let answerBytes = 24 << 20
    static let budgetBytes = 64 << 20
    static let clients = 8

    /// An upstream that answers every request with `answerBytes` of a known pattern, at once.
    static let upstream = #"""
        import asyncio, sys

        size = int(sys.argv[1])
        body = bytes(range(256)) * (size // 256)

        async def handle(reader, writer):
            try:
                while True:
                    await reader.readuntil(b"\r\n\r\n")
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n" % len(body))
                    writer.write(body)
                    await writer.drain()
            except Exception:
                pass
            finally:
                writer.close()

        async def main():
            server = await asyncio.start_server(handle, "127.0.0.1", 0)
            print(server.sockets[0].getsockname()[1], flush=True)
            await server.serve_forever()

        asyncio.run(main())
        """#

    /// A field of /proc/PID/status in KiB (`VmHWM`, `VmRSS`).
    static func status(_ pid: Int32, _ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    /// Whether `body` is the upstream's whole answer.
    static func isTheAnswer(_ body: Data) -> Bool {
        let pattern = (0...255).map { UInt8($0) }
        return body.count == answerBytes && body.prefix(256).elementsEqual(pattern) && body.suffix(256).elementsEqual(pattern)
    }

    @Test("slow readers of large upstream answers are held within the budget; the rest get 502 saying why")
    func slowReadersStayWithinTheBudget() async throws {
        let folder = try TemporaryFolder()
        try folder.write("front/local.yaml", "endpoint: GET /local\nrules:\n  - { name: local, respond: { text: here } }\n")
        let script = try folder.write("upstream.py", Self.upstream)
        let upstream = try ChildProcess("/usr/bin/env", ["python3", script, String(Self.answerBytes)])
        defer { upstream.kill() }
        let upstreamPort = try #require(await upstream.firstOutputLine(timeout: .seconds(30)).flatMap { UInt16($0) },
                                        "the upstream did not start: \(upstream.standardError)")
        let (front, port) = try await ServeTests.startServer([
            "serve", "--port", "0", "--scenarios", folder.path + "/front", "--watch", "off", "--log-level", "warning",
            "--upstream", "http://127.0.0.1:\(upstreamPort)", "--upstream-memory", String(Self.budgetBytes),
        ])
        defer { front.kill() }
        let pid = front.pid
        let baseline = try #require(Self.status(pid, "VmHWM"))

        // Every client asks, and reads nothing for now.
        let connections = try (0..<Self.clients).map { _ in try RawHTTPConnection(port: port, timeoutSeconds: 30) }
        defer { connections.forEach { $0.close() } }
        for connection in connections { try connection.sendRequest("GET", "/big") }
        // Until every call is settled: each answered by the upstream (its body held, waiting to
        // be read) or refused. Then the held answers sit in the server while nobody reads.
        var entries: [[String: Any]] = []
        _ = await eventually(within: .seconds(30), every: .milliseconds(100)) {
            let journal = Self.journal(port)
            entries = journal.filter { $0["path"] as? String == "/big" }
            return entries.count == Self.clients && entries.allSatisfy { $0["upstreamMs"] is Double }
        }
        try await Task.sleep(for: .milliseconds(500))
        let peak = try #require(Self.status(pid, "VmHWM"))
        let held = try #require(Self.status(pid, "VmRSS"))

        // Read now: each gets the whole answer, or a 502 naming the budget.
        var whole = 0, refused = 0
        for connection in connections {
            let answer = try connection.readResponse()
            if answer.status == 200 {
                #expect(Self.isTheAnswer(answer.body), "an answer of \(answer.body.count) bytes")
                whole += 1
            } else {
                #expect(answer.status == 502, "\(answer.status)")
                #expect(answer.text.contains("--upstream-memory \(Self.budgetBytes)"), "\(answer.text)")
                refused += 1
            }
        }
        print("\(Self.clients) slow readers of \(Self.answerBytes >> 20) MiB answers, --upstream-memory \(Self.budgetBytes >> 20) MiB: "
            + "\(whole) held and sent whole, \(refused) refused; VmHWM \(baseline >> 10) MiB before, \(peak >> 10) MiB at the peak, VmRSS \(held >> 10) MiB while held")
        #expect(whole >= 2 && whole <= Self.budgetBytes / Self.answerBytes, "\(whole) answers held at once")
        #expect(whole + refused == Self.clients)
        // The held answers' bodies, once each (not copied again), and the server's own memory.
        let allowance = (Self.budgetBytes + 48 << 20) >> 10
        #expect(peak - baseline < allowance, "the peak grew by \((peak - baseline) >> 10) MiB for a budget of \(Self.budgetBytes >> 20) MiB")

        // All read: the budget is free again, and each request alone gets its answer.
        for _ in 0..<Self.clients {
            let connection = try RawHTTPConnection(port: port, timeoutSeconds: 30)
            try connection.sendRequest("GET", "/big")
            let answer = try connection.readResponse()
            #expect(answer.status == 200 && Self.isTheAnswer(answer.body), "\(answer.status) \(answer.body.count) bytes")
        }
        #expect(front.isRunning)
    }

    /// The journal's entries, from the admin API.
    static func journal(_ port: UInt16) -> [[String: Any]] {
        guard let connection = try? RawHTTPConnection(port: port, timeoutSeconds: 10),
              (try? connection.sendRequest("GET", "/__mishap/requests")) != nil,
              let answer = try? connection.readResponse(),
              let object = answer.json else { return [] }
        return object["requests"] as? [[String: Any]] ?? []
    }
}
