import Foundation
import MishapEngine
import MishapRecording
import MishapSupport
import MishapTestSupport
import Testing

/// Recording many distinct queries of one endpoint: its file is rewritten at most once per
/// `Recorder.writeInterval` (counted with inotify), not once per request, and every request
/// is in it once `flush()` returns, in the order first match needs.
@Suite struct RecorderWriteTests {
    @Test("1,000 queries of one endpoint: the file is rewritten once per interval at most, and holds them all")
    func oneEndpointsFileIsWrittenPerIntervalNotPerRequest() throws {
        let recording = try RecorderTests.Recording()
        let events = try #require(FileEvents())
        try #require(events.watch(folder: recording.folder.path, scope: .entries) != nil)
        let count = 1000
        let start = ContinuousClock.now
        for number in 0..<count {
            // Every seventh with a second parameter: those rules go above the others.
            let query = number % 7 == 0 ? [("q", "v\(number)"), ("page", "2")] : [("q", "v\(number)")]
            recording.recorder.record(RecorderTests.request("GET", "/items", query),
                                      RecorderTests.answer(200, [("Content-Type", "text/plain")], Array("item \(number)".utf8)))
        }
        recording.recorder.flush()
        let elapsed = ContinuousClock.now - start
        let writes = events.read().filter { $0.name == "get_items.yaml" }.count
        let allowed = Int(elapsed / .nanoseconds(Recorder.writeInterval)) + 2
        #expect(writes >= 1 && writes <= allowed, "\(writes) writes of get_items.yaml in \(elapsed), \(allowed) allowed")
        #expect(recording.recorder.summary == Recorder.Summary(requests: count, files: 1, repeats: 0))

        let engine = try recording.engine()
        for number in stride(from: 0, to: count, by: 37) {
            let query = number % 7 == 0 ? [("q", "v\(number)"), ("page", "2")] : [("q", "v\(number)")]
            let plan = engine.respond(to: RecorderTests.request("GET", "/items", query))
            #expect(plan.status == 200 && String(decoding: plan.body, as: UTF8.self) == "item \(number)", "q=v\(number)")
        }
        let text = try recording.text("get_items.yaml")
        #expect(text.components(separatedBy: "  - name: ").count - 1 == count)
        let twoParameters = try #require(text.range(of: "\"page\": \"2\""))
        #expect(text.range(of: "\"q\": \"v1\"")!.lowerBound > twoParameters.lowerBound, "rules testing two parameters come first")
    }

    @Test("A repeat arriving while the first is recorded is one; a rule whose body file cannot be written frees its query")
    func repeatsAndFailedBodies() throws {
        let recording = try RecorderTests.Recording()
        let large = [UInt8](repeating: 0xFF, count: 10_000)
        // `files` is a file, not a folder: the body file cannot be written.
        try recording.folder.write("files", "in the way")
        recording.recorder.record(RecorderTests.request("GET", "/blob"), RecorderTests.answer(200, [], large))
        #expect(recording.recorder.summary == Recorder.Summary(requests: 0, files: 0, repeats: 0))
        #expect(recording.messages.contains { $0.hasPrefix("not recording GET /blob: ") }, "\(recording.messages)")
        try FileManager.default.removeItem(atPath: recording.folder.path + "/files")
        recording.recorder.record(RecorderTests.request("GET", "/blob"), RecorderTests.answer(200, [], large))
        recording.recorder.record(RecorderTests.request("GET", "/blob"), RecorderTests.answer(200, [], large))
        #expect(recording.recorder.summary == Recorder.Summary(requests: 1, files: 1, repeats: 1))
        let plan = try recording.engine().respond(to: RecorderTests.request("GET", "/blob"))
        #expect(plan.body == large)
    }
}
