import Foundation
import MishapEngine
import MishapRecording
import MishapScenarios
import MishapTestSupport
import Testing

/// An upstream header whose value a scenario file cannot declare (empty, or with a control
/// character) is left out of the recording with a warning, so the folder still loads.
@Suite struct RecordedHeaderValueTests {
    @Test func unsendableValuesAreLeftOutAndTheRecordingLoads() throws {
        let recording = try RecorderTests.Recording()
        recording.recorder.record(
            RecorderTests.request("GET", "/h"),
            RecorderTests.answer(200, [("Content-Type", "text/plain"), ("X-Empty", ""), ("X-Bell", "a\u{7}b"), ("X-Tab", "a\tb")],
                                 Array("ok".utf8)))
        let plan = try recording.engine().respond(to: RecorderTests.request("GET", "/h"))
        #expect(plan.status == 200)
        #expect(RecorderTests.header(plan, "X-Tab") == "a\tb")
        #expect(RecorderTests.header(plan, "X-Empty") == nil)
        #expect(RecorderTests.header(plan, "X-Bell") == nil)
        #expect(recording.messages.contains { $0.contains("X-Empty") && $0.contains("empty or holds control characters") },
                "\(recording.messages)")
    }
}
