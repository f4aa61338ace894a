import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// 1,000 requests held at once by a front `mishap serve --upstream` while a slow upstream
/// `mishap serve` (a rule with `delay`) answers them, every process real: all get the upstream's
/// answer about one delay after they were sent, and a request a rule of the front answers comes
/// back at once meanwhile. The 1,000 clients are a Python asyncio script in a process of its
/// own, so this test process holds no socket of theirs (Foundation's `Process.run`, which the
/// other tests of this target call meanwhile, can crash in a process holding thousands).
@Suite("1,000 requests held on a slow upstream", .onBlockingThreads)
struct UpstreamHeldRequestsTests {
    static let count = 1000
    /// The upstream's delay: long enough that opening 1,000 connections and sending their
    /// requests (a few hundred milliseconds on a loaded machine) is small beside it.
    static let delaySeconds = 3.0

    /// The client: opens `count` connections at once, each sending `GET /slow`; once every
    /// request is out, times a `GET /local` on a new connection every 100 ms until the first
    /// answer to `/slow` comes; then waits for them all. Prints one JSON object.
    static let client = #"""
        import asyncio, json, resource, sys

        port, count, delay = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = count + 64
        if soft != resource.RLIM_INFINITY and soft < wanted:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard))

        async def main():
            loop = asyncio.get_running_loop()
            start = loop.time()
            sent, answers, errors = [], [], []
            all_sent, first_answer = asyncio.Event(), asyncio.Event()

            async def get(path):
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
                await writer.drain()
                return reader, writer

            async def held():
                try:
                    reader, writer = await get("/slow")
                    written = loop.time() - start
                    sent.append(written)
                    if len(sent) == count:
                        all_sent.set()
                    data = await reader.read()
                    writer.close()
                    answers.append((data, loop.time() - start, written))
                    first_answer.set()
                except Exception as error:
                    errors.append(repr(error))
                    if len(sent) + len(errors) == count:
                        all_sent.set()

            tasks = [asyncio.create_task(held()) for _ in range(count)]
            await asyncio.wait_for(all_sent.wait(), timeout=30)
            probes = []
            while not first_answer.is_set() and loop.time() - start < 3 * delay:
                began = loop.time()
                reader, writer = await get("/local")
                data = await reader.read()
                writer.close()
                ended = loop.time()
                probes.append({"ok": data.startswith(b"HTTP/1.1 200") and data.endswith(b"from the front"),
                               "ms": (ended - began) * 1000, "held": not first_answer.is_set()})
                await asyncio.sleep(0.1)
            await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
            good = [t for data, t, _ in answers if data.startswith(b"HTTP/1.1 200") and data.endswith(b"slow from the upstream")]
            print(json.dumps({
                "answered": len(good), "errors": errors[:3], "errorCount": len(errors),
                "other": [data[:200].decode(errors="replace") for data, _, _ in answers if not data.endswith(b"upstream")][:3],
                "lastSent": max(sent, default=-1), "firstAnswer": min((t for _, t, _ in answers), default=-1),
                "lastAnswer": max((t for _, t, _ in answers), default=-1),
                "longestWait": max((t - written for _, t, written in answers), default=-1), "probes": probes,
            }))

        asyncio.run(main())
        """#

    /// What the client measured.
    struct Measured: Decodable {
        struct Probe: Decodable {
            var ok: Bool
            var ms: Double
            var held: Bool
        }

        var answered: Int
        var errors: [String]
        var errorCount: Int
        var other: [String]
        /// Seconds from the start: the last request written, the first and the last answer.
        var lastSent: Double
        var firstAnswer: Double
        var lastAnswer: Double
        /// The longest time from writing a request to its answer, in seconds.
        var longestWait: Double
        var probes: [Probe]
    }

    @Test("1,000 proxied requests are held at once while a slow upstream answers; a local rule answers meanwhile")
    func thousandHeldWhileTheUpstreamIsSlow() async throws {
        // The front holds each client's connection and one to the upstream: 2,000 descriptors
        // and more, which `serve` raises its soft limit for (up to the hard one, inherited).
        var limit = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        try #require(limit.rlim_max == rlim_t.max || limit.rlim_max >= rlim_t(2 * Self.count + 200),
                     "the hard limit on open files (\(limit.rlim_max)) is too low for \(Self.count) held requests")

        let folder = try TemporaryFolder()
        try folder.write("upstream/slow.yaml", """
            endpoint: GET /slow
            rules:
              - { name: slow, respond: { delay: \(Int(Self.delaySeconds * 1000)), text: slow from the upstream } }
            """)
        try folder.write("front/local.yaml", "endpoint: GET /local\nrules:\n  - { name: local, respond: { text: from the front } }\n")
        let script = try folder.write("client.py", Self.client)
        let quiet = ["--watch", "off", "--log-level", "warning"]
        let (upstream, upstreamPort) = try await ServeTests.startServer(
            ["serve", "--port", "0", "--scenarios", folder.path + "/upstream"] + quiet)
        defer { upstream.kill() }
        let (front, frontPort) = try await ServeTests.startServer(
            ["serve", "--port", "0", "--scenarios", folder.path + "/front", "--upstream", "http://127.0.0.1:\(upstreamPort)"] + quiet)
        defer { front.kill() }

        let began = ContinuousClock.now
        let finished = try await run("/usr/bin/env", ["python3", script, String(frontPort), String(Self.count), String(Self.delaySeconds)],
                                     timeout: .seconds(90))
        let took = ContinuousClock.now - began
        #expect(finished.status == 0, "\(finished.standardError)")
        let measured = try JSONDecoder().decode(Measured.self, from: Data(finished.standardOutput.utf8))
        let context = "front: \(front.standardError.suffix(2000)) upstream: \(upstream.standardError.suffix(1000))"

        // Every one got the upstream's answer.
        #expect(measured.answered == Self.count, "errors \(measured.errorCount): \(measured.errors); other answers: \(measured.other); \(context)")
        // All were out at once: the last was sent before the first answer came, and none waited
        // for another's delay (one after another they would take 3,000 s; two at a time, on the
        // server's threads, 1,500 s).
        #expect(measured.lastSent < measured.firstAnswer, "\(measured.lastSent) s, \(measured.firstAnswer) s")
        #expect(measured.firstAnswer >= Self.delaySeconds * 0.95, "answered before the upstream's delay: \(measured.firstAnswer) s")
        #expect(measured.longestWait < 2 * Self.delaySeconds, "a request waited \(measured.longestWait) s for its answer")
        #expect(measured.lastAnswer < 2.5 * Self.delaySeconds, "the last answer came \(measured.lastAnswer) s after the start")
        // Meanwhile a rule of the front answered at once, every time.
        let held = measured.probes.filter(\.held)
        #expect(held.count >= 3, "\(measured.probes)")
        #expect(held.allSatisfy { $0.ok }, "\(measured.probes)")
        let times = held.map(\.ms).sorted()
        #expect((times.isEmpty ? .infinity : times[times.count / 2]) < 200, "local answers while held, ms: \(times)")
        #expect(times.allSatisfy { $0 < Self.delaySeconds * 1000 / 2 }, "a local answer waited on the upstream, ms: \(times)")
        #expect(front.isRunning && upstream.isRunning)
        print("1,000 held: last sent \(measured.lastSent) s, answers from \(measured.firstAnswer) to \(measured.lastAnswer) s (longest wait \(measured.longestWait) s); local answers meanwhile (ms): \(times); the test took \(took)")
    }
}
