import Foundation
import MishapEngine
import MishapRecording
import MishapScenarios
import MishapTestSupport
import MishapUpstream
import Synchronization
import Testing

/// The recorder and its writer without sockets: answers recorded, the folder loaded back with
/// the scenario loader, and the engine asked the same requests: each must get the recorded
/// status, headers and body byte for byte.
@Suite struct RecorderTests {
    /// A request as the server hands it over: the query already split and decoded.
    static func request(_ method: String, _ path: String, _ query: [(String, String)] = [],
                        headers: [(String, String)] = []) -> Request {
        Request(method: method, path: path, query: query.map { Field($0.0, $0.1) }, headers: headers.map { Field($0.0, $0.1) })
    }

    /// An upstream's answer.
    static func answer(_ status: Int, _ headers: [(String, String)] = [], _ body: [UInt8] = []) -> UpstreamResult {
        .answered(status: status, headers: headers.map { (name: $0.0, value: $0.1) }, body: body, milliseconds: 1)
    }

    /// A recorder into a new folder, its events collected.
    final class Recording: Sendable {
        let folder: TemporaryFolder
        let recorder: Recorder
        let events: Events

        /// The events logged, in order.
        final class Events: Sendable {
            let list = Mutex<[Recorder.Event]>([])
            func withLock<T>(_ body: (inout [Recorder.Event]) -> T) -> T { list.withLock { body(&$0) } }
        }

        init(keeping: [String] = []) throws {
            let folder = try TemporaryFolder()
            let events = Events()
            self.folder = folder
            self.events = events
            recorder = Recorder(writer: ScenarioWriter(directory: folder.path, upstream: "http://127.0.0.1:9"),
                                headers: HeaderSelection(keeping: keeping)) { event in events.withLock { $0.append(event) } }
        }

        /// The engine serving the folder as `mishap serve --scenarios` would, without warnings
        /// (once every request recorded is in its file).
        func engine(sourceLocation: SourceLocation = #_sourceLocation) throws -> Engine {
            recorder.flush()
            let set = try ScenarioLoader.load(directory: folder.path)
            #expect(set.warnings.isEmpty, "\(set.warnings)", sourceLocation: sourceLocation)
            return set.makeEngine()
        }

        func text(_ file: String) throws -> String {
            recorder.flush()
            return try String(contentsOfFile: folder.path + "/" + file, encoding: .utf8)
        }

        var messages: [String] { events.withLock { $0.map(\.message) } }
    }

    /// The value of a header of `plan`.
    static func header(_ plan: ResponsePlan, _ name: String) -> String? {
        plan.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    @Test("Several queries on one path, and none: each request gets its own answer back")
    func queriesOnOnePath() throws {
        let recording = try Recording()
        let cases: [([(String, String)], Int, String)] = [
            ([], 200, "all"),
            ([("status", "open")], 200, "open ones"),
            ([("status", "open"), ("page", "2")], 206, "page 2 of the open ones"),
            ([("q", "a b&c+d")], 200, "a query with & and + and a space"),
            ([("q", "{{query.x}}")], 200, "braces in the value"),
            ([("empty", "")], 200, "an empty value"),
            ([("status", "closed")], 404, "none closed"),
        ]
        for (query, status, body) in cases {
            recording.recorder.record(Self.request("GET", "/v1/orders", query),
                                      Self.answer(status, [("Content-Type", "text/plain"), ("X-Count", "\(query.count)")], Array(body.utf8)))
        }
        #expect(recording.recorder.summary == Recorder.Summary(requests: cases.count, files: 1, repeats: 0))
        let engine = try recording.engine()
        for (query, status, body) in cases {
            let plan = engine.respond(to: Self.request("GET", "/v1/orders", query))
            #expect(plan.status == status, "\(query)")
            #expect(String(decoding: plan.body, as: UTF8.self) == body, "\(query)")
            #expect(Self.header(plan, "X-Count") == "\(query.count)", "\(query)")
            #expect(Self.header(plan, "Content-Type") == "text/plain", "\(query)")
        }
        // The parameters in another order are the same request to a rule: a repeat.
        recording.recorder.record(Self.request("GET", "/v1/orders", [("page", "2"), ("status", "open")]), Self.answer(500))
        #expect(recording.recorder.summary.repeats == 1)
        let text = try recording.text("get_v1-orders.yaml")
        #expect(text.contains(#"endpoint: "GET /v1/orders""#), "\(text)")
        // Most parameters first, the request without a query last.
        let names = text.split(separator: "\n").filter { $0.hasPrefix("  - name: ") }.map { String($0.dropFirst(10)) }
        #expect(names.first == #""status-open_page-2""#, "\(names)")
        #expect(names.last == #""noQuery""#, "\(names)")
        #expect(names.count == cases.count)
    }

    @Test("Binary, large and {{ bodies go to files/, byte for byte; small text stays inline")
    func bodies() throws {
        let recording = try Recording()
        let binary: [UInt8] = (0..<256).map { UInt8($0) } + [0xFF, 0xFE, 0x00]
        let large = Array(String(repeating: "0123456789abcdef", count: 1000).utf8)
        let template = Array(#"{"greeting":"{{name}}"}"#.utf8)
        let unicode = "café \u{2028} \"quoted\" \\ back\tslash\r\nline 🙂"
        let cases: [(String, [(String, String)], [UInt8])] = [
            ("/image.png", [("Content-Type", "image/png")], binary),
            ("/large.json", [("Content-Type", "application/json")], large),
            ("/template", [("Content-Type", "application/json")], template),
            ("/unicode", [("Content-Type", "text/plain; charset=utf-8")], Array(unicode.utf8)),
            ("/untyped", [], binary),
            ("/empty", [("X-Empty", "yes")], []),
        ]
        for (path, headers, body) in cases {
            recording.recorder.record(Self.request("GET", path), Self.answer(200, headers, body))
        }
        let engine = try recording.engine()
        for (path, headers, body) in cases {
            let plan = engine.respond(to: Self.request("GET", path))
            #expect(plan.status == 200, "\(path)")
            #expect(plan.body == body, "\(path)")
            for (name, value) in headers { #expect(Self.header(plan, name) == value, "\(path) \(name)") }
        }
        #expect(Self.header(engine.respond(to: Self.request("GET", "/empty")), "Content-Type") == nil)
        let files = try FileManager.default.contentsOfDirectory(atPath: recording.folder.path + "/files").sorted()
        #expect(files == ["get_image.png.noQuery.png", "get_large.json.noQuery.json", "get_template.noQuery.json", "get_untyped.noQuery.bin"])
        #expect(try recording.text("get_unicode.yaml").contains("text: "))
    }

    @Test("Secrets and the server's own headers are left out; --keep-header keeps a secret")
    func headers() throws {
        for keeping in [[], ["set-cookie"]] {
            let recording = try Recording(keeping: keeping)
            recording.recorder.record(
                Self.request("POST", "/login", headers: [("Authorization", "Bearer request-secret"), ("Cookie", "sid=request")]),
                Self.answer(201, [
                    ("Content-Type", "application/json"), ("Set-Cookie", "sid=answer-secret"), ("Date", "Tue, 01 Jan 2030 00:00:00 GMT"),
                    ("Content-Length", "2"), ("Connection", "keep-alive"), ("Keep-Alive", "timeout=5"), ("Vary", "Accept"),
                    ("vary", "Origin"), ("X-Template", "{{not a placeholder}}"), ("Cache-Control", "no-store"),
                ], Array("{}".utf8)))
            let text = try recording.text("post_login.yaml")
            for gone in ["request-secret", "sid=request", "Date", "Content-Length", "Connection", "Keep-Alive", "X-Template"] {
                #expect(!text.contains(gone), "\(gone) in \(text)")
            }
            #expect(text.contains("answer-secret") == !keeping.isEmpty, "\(text)")
            let plan = try recording.engine().respond(to: Self.request("POST", "/login"))
            #expect(plan.status == 201)
            #expect(Self.header(plan, "Vary") == "Accept, Origin")
            #expect(Self.header(plan, "Cache-Control") == "no-store")
            #expect(Self.header(plan, "Content-Type") == "application/json")
            #expect(Self.header(plan, "Set-Cookie") == (keeping.isEmpty ? nil : "sid=answer-secret"))
            #expect(recording.messages.contains { $0.contains("X-Template") && $0.contains("placeholder") }, "\(recording.messages)")
            #expect(recording.messages.contains { $0.contains("Set-Cookie") } == keeping.isEmpty, "\(recording.messages)")
        }
    }

    @Test("HEAD, several endpoints, and paths an endpoint cannot name")
    func endpoints() throws {
        let recording = try Recording()
        recording.recorder.record(Self.request("HEAD", "/things"), Self.answer(200, [("X-Head", "1")]))
        recording.recorder.record(Self.request("DELETE", "/things/7"), Self.answer(204))
        recording.recorder.record(Self.request("GET", "/a-b"), Self.answer(200, [], Array("dash".utf8)))
        recording.recorder.record(Self.request("GET", "/a/b"), Self.answer(200, [], Array("slash".utf8)))
        recording.recorder.record(Self.request("GET", "/"), Self.answer(200, [], Array("root".utf8)))
        recording.recorder.record(Self.request("GET", "/x/{id}"), Self.answer(200))
        recording.recorder.record(Self.request("GET", "/a b"), Self.answer(200))
        recording.recorder.record(Self.request("GET", "/files/*"), Self.answer(200))
        recording.recorder.record(Self.request("PROPFIND", "/dav"), Self.answer(207))
        recording.recorder.record(Self.request("GET", "/gone"), .failed(UpstreamFailure(.unreachable, "refused"), milliseconds: 1))
        #expect(recording.recorder.summary == Recorder.Summary(requests: 5, files: 5, repeats: 0))
        let engine = try recording.engine()
        #expect(Self.header(engine.respond(to: Self.request("HEAD", "/things")), "X-Head") == "1")
        #expect(engine.respond(to: Self.request("DELETE", "/things/7")).status == 204)
        #expect(engine.respond(to: Self.request("GET", "/a-b")).body == Array("dash".utf8))
        #expect(engine.respond(to: Self.request("GET", "/a/b")).body == Array("slash".utf8))
        #expect(engine.respond(to: Self.request("GET", "/")).body == Array("root".utf8))
        #expect(engine.respond(to: Self.request("GET", "/gone")).status == 404)
        let files = try FileManager.default.contentsOfDirectory(atPath: recording.folder.path).sorted()
        #expect(files == ["delete_things-7.yaml", "get_a-b-2.yaml", "get_a-b.yaml", "get_root.yaml", "head_things.yaml"])
        let warnings = recording.events.withLock { $0.filter { $0.level == .warning }.map(\.message) }
        #expect(warnings.count == 4, "\(warnings)")
        for path in ["/x/{id}", "/a b", "/files/*", "PROPFIND"] {
            #expect(warnings.contains { $0.contains(path) }, "\(path): \(warnings)")
        }
    }

    @Test("YAML quoting reads back as the text, whatever it holds")
    func quoting() throws {
        let texts = ["", "yes", "~", "null", "1.0", "- a", "a: b # c", "  lead", "\u{0}\u{1}\u{7F}\u{85}\u{9F}\u{A0}",
                     "\u{2028}\u{2029}\u{FEFF}\u{FFFE}\u{FFFF}", "\"\\\t\r\n", "🙂 é 中"]
        for text in texts {
            let yaml = "endpoint: GET /q\nrules:\n  - name: q\n    respond: { text: \(YAMLQuoting.quoted(text)) }\n"
            let set = try ScenarioLoader.load(yaml: yaml)
            let body = set.makeEngine().respond(to: Self.request("GET", "/q")).body
            #expect(body == Array(text.utf8), "\(Array(text.unicodeScalars))")
        }
    }
}
