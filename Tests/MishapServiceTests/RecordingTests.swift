import Foundation
import MishapEngine
import MishapRecording
import MishapService
import MishapTestSupport
import MishapUpstream
import Testing

/// `ServiceOptions.upstreamAnswers` with a `Recorder`: a front with no rules in front of a
/// second Mishap records what passes through, over real sockets, and a third Mishap serving the
/// recording answers the same requests the same way. Requests a rule answers are not recorded.
@Suite(.onBlockingThreads) struct RecordingTests {
    /// The upstream: a few answers by path and query.
    static let upstreamYAML = """
        endpoints:
          - endpoint: ANY /things/{id}
            rules:
              - name: expanded
                when: { query: { expand: "true" } }
                respond: { status: 200, headers: { X-Upstream: expanded }, json: { id: "{{path.id}}", expanded: true } }
              - name: thing
                respond: { status: 201, headers: { X-Upstream: "yes", Set-Cookie: "sid=s3cret" }, json: { id: "{{path.id}}" } }
          - endpoint: GET /bytes
            rules:
              - name: bytes
                respond: { base64: "AAEC/f7/", contentType: application/octet-stream }
        """

    @Test func recordsWhatPassesThroughAndReplaysIt() async throws {
        let upstream = try TestServer(yaml: Self.upstreamYAML)
        let folder = try TemporaryFolder()
        let recorder = Recorder(writer: ScenarioWriter(directory: folder.path, upstream: "http://127.0.0.1:\(upstream.port)"))
        let front = try TestServer(yaml: """
            endpoint: GET /local
            rules: [{ name: local, respond: { text: here } }]
            """, options: ServiceOptions(upstream: UpstreamOptions(url: "http://127.0.0.1:\(upstream.port)"),
                                         upstreamAnswers: recorder.record))

        let targets = [("GET", "/things/7?expand=true"), ("GET", "/things/7"), ("DELETE", "/things/8"), ("GET", "/bytes")]
        var answers: [ClientResponse] = []
        for (method, target) in targets {
            answers.append(try await front.send(method, target))
        }
        // Recorded by the time the client has its answer (its file follows within a tenth of a second).
        #expect(recorder.summary == Recorder.Summary(requests: 4, files: 3, repeats: 0))
        #expect(try await front.send("GET", "/local").text == "here")
        #expect(try await front.send("GET", "/things/7").status == 201)
        #expect(recorder.summary == Recorder.Summary(requests: 4, files: 3, repeats: 1))
        #expect(answers[1].header("Set-Cookie") == "sid=s3cret")

        // The files are written by the recorder's own thread, within a tenth of a second.
        recorder.flush()
        let replay = try TestServer(directory: folder.path, options: ServiceOptions(), watch: .off)
        for ((method, target), answer) in zip(targets, answers) {
            let replayed = try await replay.send(method, target)
            #expect(replayed.status == answer.status, "\(method) \(target)")
            #expect(replayed.body == answer.body, "\(method) \(target)")
            #expect(replayed.header("Content-Type") == answer.header("Content-Type"), "\(method) \(target)")
            #expect(replayed.header("X-Upstream") == answer.header("X-Upstream"), "\(method) \(target)")
            #expect(replayed.header("Set-Cookie") == nil, "\(method) \(target)")
        }
        #expect(try await replay.send("GET", "/local").status == 404, "a rule's answer is not recorded")
    }
}
