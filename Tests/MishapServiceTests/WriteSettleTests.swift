import Foundation
import MishapService
import MishapTestSupport
import Testing

/// A scenario file written in place is read once it has stopped changing for the settle time
/// (`--watch-settle`): one written in two steps is never served half-written, the last complete
/// version answering meanwhile; a file renamed into place (an atomic save) is read at once.
/// Requests go over real sockets; with inotify and with polling.
@Suite(.onBlockingThreads) struct WriteSettleTests {
    static let first = """
        endpoints:
          - endpoint: GET /a
            rules:
              - name: a
                respond: { text: two }

        """
    static let second = """
          - endpoint: GET /b
            rules:
              - name: b
                respond: { text: bee }

        """
    static let original = "endpoint: GET /a\nrules:\n  - name: a\n    respond: { text: one }\n"

    /// What `GET path` answers: `STATUS BODY`.
    static func answer(_ port: UInt16, _ path: String) throws -> String {
        let connection = try RawHTTPConnection(port: port)
        defer { connection.close() }
        try connection.sendRequest("GET", path, headers: [("Connection", "close")])
        let response = try connection.readResponse()
        return "\(response.status) \(String(decoding: response.body, as: UTF8.self))"
    }

    /// A Mishap watching a folder holding `h.yaml` (answering `one`), with the settle time given,
    /// once its watcher has set up.
    static func start(_ folder: TemporaryFolder, _ mode: MishapInstance.WatchMode, settle: Duration) async throws -> MishapInstance {
        _ = try folder.write("h.yaml", original)
        let instance = try MishapInstance.start(
            MishapInstance.Configuration(scenarios: .directory(folder.path), server: TestServer.configuration, watch: mode,
                                         watchSettle: settle),
            logger: quietLogger)
        try await Task.sleep(for: .milliseconds(200))
        return instance
    }

    @Test(arguments: [MishapInstance.WatchMode.auto, .poll])
    func aFileWrittenInTwoStepsIsReadWhole(mode: MishapInstance.WatchMode) async throws {
        let folder = try TemporaryFolder()
        // 3 s: the pause between the writes (1 s) and a loaded machine's stall (2 s) fit in it.
        let instance = try await Self.start(folder, mode, settle: .seconds(3))
        defer { instance.stop() }
        let port = instance.port, path = folder.path + "/h.yaml"

        // In place: truncated and written, then appended to a second later. The first part
        // alone is valid YAML, which answers /a differently and /b not at all.
        try Self.first.write(toFile: path, atomically: false, encoding: .utf8)
        let written = ContinuousClock.now
        while written.duration(to: .now) < .seconds(1) {
            try await Task.sleep(for: .milliseconds(100))
            #expect(try Self.answer(port, "/a") == "200 one", "the half-written file was read")
        }
        #expect(instance.service.reloads == 0)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(Self.second.utf8))
        try handle.close()

        #expect(try await eventually(within: .seconds(10)) { try Self.answer(port, "/b") == "200 bee" })
        #expect(try Self.answer(port, "/a") == "200 two")
        #expect(instance.service.reloads == 1, "one reload, of the whole file")
        #expect(instance.service.lastReloadFailure == nil)
    }

    /// With a settle time of a minute: a file written beside and renamed into place is read
    /// long before it, as is a file removed, and (with inotify, which tells a rename from a
    /// write) a file added by a rename. Polling cannot tell a new file renamed into place from
    /// one being written, so it waits the settle time for a new file.
    @Test(arguments: [MishapInstance.WatchMode.auto, .poll])
    func aFileRenamedIntoPlaceIsReadAtOnce(mode: MishapInstance.WatchMode) async throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("c.yaml", "endpoint: GET /c\nrules:\n  - name: c\n    respond: { text: cee }\n")
        let instance = try await Self.start(folder, mode, settle: .seconds(60))
        defer { instance.stop() }
        let port = instance.port, path = folder.path + "/h.yaml"
        #expect(try Self.answer(port, "/c") == "200 cee")

        try (Self.first + Self.second).write(toFile: path + ".tmp", atomically: false, encoding: .utf8)
        #expect(rename(path + ".tmp", path) == 0)
        #expect(try await eventually(within: .seconds(10)) { try Self.answer(port, "/b") == "200 bee" })
        #expect(try Self.answer(port, "/a") == "200 two")

        try FileManager.default.removeItem(atPath: folder.path + "/c.yaml")
        #expect(try await eventually(within: .seconds(10)) { try Self.answer(port, "/c").hasPrefix("404") })

        guard mode == .auto else { return }
        try "endpoint: GET /d\nrules:\n  - name: d\n    respond: { text: dee }\n".write(toFile: folder.path + "/.d.tmp", atomically: false, encoding: .utf8)
        #expect(rename(folder.path + "/.d.tmp", folder.path + "/d.yaml") == 0)
        #expect(try await eventually(within: .seconds(10)) { try Self.answer(port, "/d") == "200 dee" })
    }
}
