import Foundation
import Logging
import MishapEngine
import MishapHTTP
import MishapService
import MishapSupport
import MishapTestSupport
import Synchronization
import Testing

/// The request log's writer and its fast path: lines batched by a thread of their own, in
/// order, whole, never lost below the bound and counted when dropped above it; and request
/// lines written byte by byte exactly as swift-log's path writes them.
@Suite(.onBlockingThreads) struct LogWriterTests {
    static func notice(_ count: Int) -> [UInt8] { Array("dropped \(count)\n".utf8) }

    static func line(_ text: String) -> (inout [UInt8]) -> Void {
        { $0.append(contentsOf: (text + "\n").utf8) }
    }

    /// Lines written at once (`write`) and queued (`enqueue`) come out in the order of the calls.
    @Test func queuedAndImmediateLinesKeepTheirOrder() throws {
        let pipe = LogPipe()
        let writer = LogWriter(descriptor: pipe.writeEnd, droppedNotice: Self.notice)
        writer.write(Array("first, before any thread\n".utf8))
        for round in 0..<50 {
            writer.enqueue(Self.line("queued \(round) a"))
            writer.enqueue(Self.line("queued \(round) b"))
            writer.write(Array("written \(round)\n".utf8))
        }
        var lines: [String] = []
        while let line = pipe.nextLine(timeout: .milliseconds(500)) { lines.append(line) }
        let expected = ["first, before any thread"] + (0..<50).flatMap { ["queued \($0) a", "queued \($0) b", "written \($0)"] }
        #expect(lines == expected)
    }

    /// 8 threads queue 2,000 lines each at once: every line arrives once and whole.
    @Test func concurrentLinesArriveWholeAndOnce() async throws {
        let pipe = LogPipe()
        let writer = LogWriter(descriptor: pipe.writeEnd, droppedNotice: Self.notice)
        let threads = 8, each = 2000
        let reader = Task.detached {
            var seen: [String] = []
            while seen.count < threads * each, let line = pipe.nextLine(timeout: .seconds(10)) { seen.append(line) }
            return seen
        }
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<each { writer.enqueue(Self.line("thread \(thread) line \(index) " + String(repeating: "x", count: index % 97))) }
        }
        writer.flush()
        let seen = await reader.value
        #expect(seen.count == threads * each)
        #expect(Set(seen).count == threads * each)
        for thread in 0..<threads {
            let mine = seen.filter { $0.hasPrefix("thread \(thread) ") }
            #expect(mine == (0..<each).map { "thread \(thread) line \($0) " + String(repeating: "x", count: $0 % 97) },
                    "thread \(thread)'s lines are whole and in its order")
        }
    }

    /// A reader that stops reading: past the bound, request lines are dropped, never blocking
    /// the caller, and every drop is counted in a notice line once the reader is back.
    @Test func aStalledReaderLosesLinesCountedNeverSilently() throws {
        let pipe = LogPipe()
        let writer = LogWriter(descriptor: pipe.writeEnd, limit: 4096, droppedNotice: Self.notice)
        let total = 20_000
        let started = ContinuousClock.now
        for index in 0..<total { writer.enqueue(Self.line("request \(index) " + String(repeating: "y", count: 40))) }
        // The pipe holds 64 KiB and the buffer 4 KiB: most of 1 MiB of lines cannot be held.
        #expect(started.duration(to: .now) < .seconds(10), "queueing never waits on the reader")
        var received = 0, dropped = 0, notices = 0
        var last = -1, ordered = true
        while let line = pipe.nextLine(timeout: .milliseconds(800)) {
            if line.hasPrefix("dropped ") {
                notices += 1
                dropped += Int(line.dropFirst(8)) ?? 0
            } else if line.hasPrefix("request ") {
                received += 1
                let index = Int(line.split(separator: " ")[1]) ?? -1
                ordered = ordered && index > last
                last = index
                #expect(line.hasSuffix(String(repeating: "y", count: 40)), "whole: \(line)")
            } else {
                Issue.record("unexpected line \(line)")
            }
        }
        #expect(dropped > 0 && notices > 0)
        #expect(received + dropped == total, "\(received) received + \(dropped) counted as dropped")
        #expect(ordered)
        #expect(writer.droppedSinceNotice == 0)
    }

    /// `flush` waits for the batch the writer thread is writing, not only for queued lines:
    /// with the reader stalled mid-batch, it returns only once the reader drains the pipe.
    @Test func flushWaitsForTheBatchBeingWritten() async throws {
        let pipe = LogPipe()
        let writer = LogWriter(descriptor: pipe.writeEnd, droppedNotice: Self.notice)
        let lines = 2000  // 2,000 lines of 100 bytes: three times what the pipe holds
        for index in 0..<lines { writer.enqueue(Self.line(String(format: "%06d ", index) + String(repeating: "z", count: 92))) }
        // Let the writer take everything and block on the full pipe.
        try await Task.sleep(for: .milliseconds(300))
        final class Flag: Sendable { let isSet = Atomic<Bool>(false) }
        let flushed = Flag()
        let flusher = Task.detached {
            writer.flush()
            flushed.isSet.store(true, ordering: .sequentiallyConsistent)
        }
        try await Task.sleep(for: .milliseconds(200))
        let early = flushed.isSet.load(ordering: .sequentiallyConsistent)
        #expect(!early, "flush returned with a batch still being written")
        var received = 0
        while received < lines, pipe.nextLine(timeout: .seconds(5)) != nil { received += 1 }
        await flusher.value
        #expect(received == lines)
        let done = flushed.isSet.load(ordering: .sequentiallyConsistent)
        #expect(done)
    }

    /// The cached date and time of day give the same text as `WallClock.iso8601`, within a
    /// second, across seconds, days and years, and backwards (a clock set back).
    @Test func cachedTimestampsEqualTheFullFormat() {
        var cache = TimestampCache()
        let times: [Int64] = [1_790_000_000_000, 1_790_000_000_001, 1_790_000_000_999, 1_790_000_001_000, 1_790_000_000_500,
                              1_798_761_599_999, 1_798_761_600_000, 0, 86_399_999, 1_790_000_000_050]
        for time in times {
            var out: [UInt8] = []
            cache.append(milliseconds: time, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == WallClock.iso8601(milliseconds: time), "\(time)")
        }
    }

    /// The service's fast path writes the very line swift-log's path writes (a handler that is
    /// not a bare `LineLogHandler` takes that path), in text and JSON, for answers, faults,
    /// early closes, unmatched notes and durations of every shape.
    @Test(arguments: LineLogHandler.Format.allCases)
    func fastLinesEqualSwiftLogLines(format: LineLogHandler.Format) throws {
        let fastPipe = LogPipe(), slowPipe = LogPipe()
        let fastLogger = Logger(label: "mishap") { LineLogHandler(label: $0, level: .info, format: format, descriptor: fastPipe.writeEnd) }
        let slowLogger = Logger(label: "mishap") {
            MultiplexLogHandler([LineLogHandler(label: $0, level: .info, format: format, descriptor: slowPipe.writeEnd)])
        }
        let yaml = "endpoint: GET /x\nrules:\n  - name: ok\n    respond: { text: ok }\n"
        let fast = try MishapService(source: .yaml(yaml, name: "t.yaml"), logger: fastLogger)
        let slow = try MishapService(source: .yaml(yaml, name: "t.yaml"), logger: slowLogger)
        let requests = [
            CompletedRequest(method: "GET", path: "/isUserNameAvailable", status: 200, rule: "available",
                             endpoint: "GET /isUserNameAvailable", fault: nil, duration: .microseconds(123_456), completedNormally: true),
            CompletedRequest(method: "POST", path: "/login", status: nil, rule: "reset", endpoint: "POST /login",
                             fault: .reset, duration: .seconds(2) + .milliseconds(500), completedNormally: false),
            CompletedRequest(method: "GET", path: "/nowhere", status: 404, rule: nil, endpoint: nil, fault: nil,
                             duration: .nanoseconds(900), completedNormally: true,
                             note: #"nearest: GET /x rule ok: query a: expected "b", got "c""#),
            CompletedRequest(method: "DELETE", path: "/a\"b", status: 503, rule: "", endpoint: "DELETE /a\"b", fault: nil,
                             duration: .milliseconds(50), completedNormally: true),
            CompletedRequest(method: "GET", path: "/slow", status: 200, rule: "r", endpoint: "GET /slow", fault: nil,
                             duration: .seconds(12) + .microseconds(340), completedNormally: true),
        ]
        for request in requests {
            fast.completed(request)
            slow.completed(request)
        }
        fast.flushLog()
        for request in requests {
            let a = try #require(fastPipe.nextLine()), b = try #require(slowPipe.nextLine())
            // The same line but for the time, which may differ in the last digits.
            let time = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/
            #expect(a.firstMatch(of: time) != nil)
            #expect(a.replacing(time, with: "T") == b.replacing(time, with: "T"), "\(request.path)")
        }
    }
}
