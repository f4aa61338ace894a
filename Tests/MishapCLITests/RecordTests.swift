import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `mishap record` as a real process in front of a real `mishap serve`: requests sent with curl,
/// the recording stopped with SIGINT, validated with `mishap validate`, then served alone with
/// `mishap serve --scenarios` and asked the same requests: the same statuses, bodies and key
/// headers come back, secrets left out unless `--keep-header` keeps them.
@Suite("mishap record", .onBlockingThreads)
struct RecordTests {
    /// The real backend: a few endpoints with queries, a binary body, a body holding `{{`, a
    /// cookie and headers worth keeping.
    static let upstreamYAML = """
        endpoints:
          - endpoint: GET /items
            rules:
              - name: page2
                when: { query: { page: "2" } }
                respond: { headers: { Cache-Control: no-store }, json: { page: 2 } }
              - name: search
                when: { query: { q: { present: true } } }
                respond: { json: { q: "{{query.q}}" } }
              - name: first
                respond:
                  headers: { Set-Cookie: "sid=secret-session; HttpOnly", Cache-Control: max-age=60 }
                  json: { page: 1 }
          - endpoint: GET /logo.png
            rules:
              - name: logo
                respond: { base64: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", contentType: image/png }
          - endpoint: POST /orders
            rules:
              - name: created
                respond: { status: 201, headers: { Location: /orders/1 }, json: { id: 1 } }
        """

    /// The requests recorded and replayed: method, path and query, body.
    static let requests: [(method: String, target: String, body: String?)] = [
        ("GET", "/items", nil),
        ("GET", "/items?page=2", nil),
        ("GET", "/items?q=a%20b%26c%2Bd", nil),
        ("GET", "/items?q=%7B%7Bx%7D%7D", nil),
        ("GET", "/logo.png", nil),
        ("POST", "/orders", #"{"item":1}"#),
        ("GET", "/nowhere", nil),
    ]

    /// One answer as curl got it.
    struct Answer: Equatable {
        var status: Int
        var headers: [String: String]
        var body: Data

        /// The headers compared between the upstream's answer and the replay's.
        static let compared = ["content-type", "cache-control", "location"]

        /// What must be the same in the replay.
        var comparable: Answer {
            Answer(status: status, headers: headers.filter { Self.compared.contains($0.key) }, body: body)
        }
    }

    /// Sends one request with curl, its headers and body read from files (the body may be binary).
    static func fetch(_ port: UInt16, _ request: (method: String, target: String, body: String?),
                      sourceLocation: SourceLocation = #_sourceLocation) async throws -> Answer {
        let folder = try TemporaryFolder()
        let headerFile = folder.path + "/headers", bodyFile = folder.path + "/body"
        var arguments = ["-s", "--max-time", "10", "-X", request.method, "-D", headerFile, "-o", bodyFile,
                         "-H", "Authorization: Bearer request-secret", "-H", "Cookie: sid=request-cookie"]
        if let body = request.body { arguments += ["-H", "Content-Type: application/json", "--data", body] }
        let result = try await run(ServeTests.curl, arguments + ["http://127.0.0.1:\(port)\(request.target)"], timeout: .seconds(20))
        #expect(result.status == 0, "curl failed: \(result)", sourceLocation: sourceLocation)
        let head = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
        let lines = head.components(separatedBy: "\r\n")
        let status = lines.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Answer(status: status, headers: headers, body: (try? Data(contentsOf: URL(fileURLWithPath: bodyFile))) ?? Data())
    }

    /// Starts the upstream `mishap serve` on a free port.
    static func startUpstream(_ folder: TemporaryFolder) async throws -> (ChildProcess, UInt16) {
        _ = try folder.write("upstream/backend.yaml", upstreamYAML)
        return try await ServeTests.startServer(["serve", "--port", "0", "--scenarios", folder.path + "/upstream", "--watch", "off"])
    }

    /// Stops `recorder` with SIGINT and returns its last line of standard output, the summary.
    static func stop(_ recorder: ChildProcess, sourceLocation: SourceLocation = #_sourceLocation) async -> String {
        recorder.signal(SIGINT)
        #expect(await recorder.waitForExit(timeout: .seconds(10)), sourceLocation: sourceLocation)
        #expect(recorder.exitStatus == 0, "\(recorder.standardError)", sourceLocation: sourceLocation)
        return recorder.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
    }

    @Test("record, validate, then serve the recording: the same answers, without the secrets")
    func recordAndReplay() async throws {
        let folder = try TemporaryFolder()
        let (upstream, upstreamPort) = try await Self.startUpstream(folder)
        defer { upstream.kill() }
        let out = folder.path + "/recorded"
        let (recorder, port) = try await ServeTests.startServer(
            ["record", "--upstream", "http://127.0.0.1:\(upstreamPort)", "--out", out, "--port", "0"])
        defer { recorder.kill() }

        var recorded: [Answer] = []
        for request in Self.requests {
            let direct = try await Self.fetch(upstreamPort, request)
            let through = try await Self.fetch(port, request)
            #expect(through.comparable == direct.comparable, "\(request.target)")
            recorded.append(through)
        }
        #expect(recorded[0].headers["set-cookie"] == "sid=secret-session; HttpOnly")
        // A repeat is answered by the upstream again, and not recorded again.
        #expect(try await Self.fetch(port, Self.requests[1]).status == 200)

        let summary = await Self.stop(recorder)
        #expect(summary == "recorded \(Self.requests.count) request(s) in 4 file(s) in \(out) (1 repeat(s) not recorded again)",
                "\(recorder.standardOutput)")
        #expect(recorder.standardError.contains("recorded GET /items?page=2: 200 as rule 'page-2' of get_items.yaml"),
                "\(recorder.standardError)")
        #expect(recorder.standardError.contains("left out the header Set-Cookie"), "\(recorder.standardError)")

        let validated = try await runMishap(["validate", out])
        #expect(validated.status == 0, "\(validated)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(files == ["files", "get_items.yaml", "get_logo.png.yaml", "get_nowhere.yaml", "post_orders.yaml"])
        let everything = try files.filter { $0.hasSuffix(".yaml") }.map { try String(contentsOfFile: out + "/" + $0, encoding: .utf8) }.joined()
        for secret in ["secret-session", "request-secret", "request-cookie"] {
            #expect(!everything.contains(secret), "\(secret) written down:\n\(everything)")
        }

        upstream.kill()
        let (replay, replayPort) = try await ServeTests.startServer(["serve", "--port", "0", "--scenarios", out, "--watch", "off"])
        defer { replay.kill() }
        for (request, answer) in zip(Self.requests, recorded) {
            let replayed = try await Self.fetch(replayPort, request)
            #expect(replayed.comparable == answer.comparable, "\(request.target)")
            #expect(replayed.headers["set-cookie"] == nil, "\(request.target)")
        }
    }

    @Test("--keep-header keeps a secret; a folder that is not empty is refused unless --overwrite")
    func keepHeaderAndOverwrite() async throws {
        let folder = try TemporaryFolder()
        let (upstream, upstreamPort) = try await Self.startUpstream(folder)
        defer { upstream.kill() }
        let out = folder.path + "/recorded"
        _ = try folder.write("recorded/notes.txt", "mine\n")
        let arguments = ["record", "--upstream", "http://127.0.0.1:\(upstreamPort)", "--out", out, "--port", "0", "--keep-header", "set-cookie"]

        let refused = try await runMishap(arguments)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.standardError.contains("--out \(out) is not empty"), "\(refused.standardError)")
        #expect(refused.standardError.contains("--overwrite"), "\(refused.standardError)")
        #expect(!refused.standardOutput.contains("listening"))

        let (recorder, port) = try await ServeTests.startServer(arguments + ["--overwrite"])
        defer { recorder.kill() }
        let direct = try await Self.fetch(port, Self.requests[0])
        #expect(direct.headers["set-cookie"] == "sid=secret-session; HttpOnly")
        #expect(await Self.stop(recorder) == "recorded 1 request(s) in 1 file(s) in \(out)")
        #expect(FileManager.default.fileExists(atPath: out + "/notes.txt"))

        upstream.kill()
        let (replay, replayPort) = try await ServeTests.startServer(["serve", "--port", "0", "--scenarios", out, "--watch", "off"])
        defer { replay.kill() }
        let replayed = try await Self.fetch(replayPort, Self.requests[0])
        #expect(replayed.status == 200)
        #expect(replayed.headers["set-cookie"] == "sid=secret-session; HttpOnly")
        #expect(replayed.body == direct.body)
    }
}
