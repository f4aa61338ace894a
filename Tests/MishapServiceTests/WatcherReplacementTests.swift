import Foundation
import MishapService
import MishapTestSupport
import Testing

/// The scenarios folder replaced rather than edited, watched with inotify: removed and copied
/// back, a new folder moved into place, a sub-folder rebuilt, and a symbolic link to the folder
/// retargeted atomically (as Kubernetes updates a ConfigMap volume). Each replacement is picked
/// up, and so is every edit after it: the watcher follows the new folders, not the old ones.
@Suite(.onBlockingThreads) struct WatcherReplacementTests {
    /// A file answering `GET /PATH` with `text`.
    static func scenario(_ path: String, _ text: String) -> String {
        """
        endpoint: GET /\(path)
        rules:
          - name: \(path)
            respond: { text: \(text) }
        """
    }

    /// Writes `files` (relative path: contents) under `folder`, creating it and its sub-folders.
    static func fill(_ folder: String, _ files: [String: String]) throws {
        for (relative, contents) in files {
            let full = folder + "/" + relative
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: URL(fileURLWithPath: full))
        }
    }

    /// Edits `path`, a file no longer in the watched tree, and checks that nothing reloads
    /// within 400 ms (four times the settle time).
    static func expectNoReload(_ harness: TestServer, editing path: String, _ message: Comment,
                               sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let reloads = harness.service.reloads
        try overwrite(path, scenario("w", "stale"))
        try await Task.sleep(for: .milliseconds(400))
        #expect(harness.service.reloads == reloads, message, sourceLocation: sourceLocation)
    }

    /// Writes `text` into the existing file `path` (in place, as `>` does).
    static func overwrite(_ path: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// A server for `directory`, watched with inotify (`auto`, checked), once its watches are set.
    static func watchedServer(_ directory: String) async throws -> TestServer {
        let harness = try TestServer(directory: directory, watch: .auto)
        #expect(harness.instance.watcher?.mechanism == .inotify)
        try await Task.sleep(for: .milliseconds(100))
        return harness
    }

    /// Whether `GET /PATH` answers 200 with `text` within 3 s; records the failure as `what`
    /// otherwise. A rename is reported 100 ms after the folder is quiet and a file written in
    /// place 300 ms after it stopped changing; the rest of the 3 s is for a machine loaded by
    /// the other suites (one answered just after 1 s there, with the edit it waited for).
    static func expectAnswer(_ harness: TestServer, _ path: String, _ text: String, after what: String,
                             sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let answered = try await eventually(within: .seconds(3)) {
            let response = try await harness.get("/" + path)
            return response.status == 200 && response.text == text
        }
        let now = try await harness.get("/" + path)
        #expect(answered, "\(what) was not picked up within 3 s: GET /\(path) answers \(now.status) \(now.text)",
                sourceLocation: sourceLocation)
    }

    /// `rm -rf sc && cp -r new sc`, then an edit, then a reload asked for and another edit.
    @Test func removedAndCopiedBack() async throws {
        let base = try TemporaryFolder()
        let scenarios = base.path + "/sc"
        try Self.fill(scenarios, ["w.yaml": Self.scenario("w", "v1"), "more/m.yaml": Self.scenario("m", "m1")])
        try Self.fill(base.path + "/new", ["w.yaml": Self.scenario("w", "v2"), "more/m.yaml": Self.scenario("m", "m2")])
        let harness = try await Self.watchedServer(scenarios)
        try await Self.expectAnswer(harness, "w", "v1", after: "the first load")

        try FileManager.default.removeItem(atPath: scenarios)
        try FileManager.default.copyItem(atPath: base.path + "/new", toPath: scenarios)
        try await Self.expectAnswer(harness, "w", "v2", after: "the copied folder")
        try await Self.expectAnswer(harness, "m", "m2", after: "the copied sub-folder")

        try Self.overwrite(scenarios + "/w.yaml", Self.scenario("w", "v3"))
        try await Self.expectAnswer(harness, "w", "v3", after: "an edit after the copy")
        try Self.overwrite(scenarios + "/more/m.yaml", Self.scenario("m", "m3"))
        try await Self.expectAnswer(harness, "m", "m3", after: "an edit in the copied sub-folder")

        // A reload asked for leaves the watches as they were: edits keep being picked up.
        let reloaded = try await harness.send("POST", "/__mishap/reload")
        #expect(reloaded.status == 200, "\(reloaded.text)")
        try Self.overwrite(scenarios + "/w.yaml", Self.scenario("w", "v4"))
        try await Self.expectAnswer(harness, "w", "v4", after: "an edit after POST /__mishap/reload")
        #expect(harness.service.lastReloadFailure == nil)
    }

    /// `rm -rf sc && mv new sc`, then an edit.
    @Test func newFolderMovedIntoPlace() async throws {
        let base = try TemporaryFolder()
        let scenarios = base.path + "/sc"
        try Self.fill(scenarios, ["w.yaml": Self.scenario("w", "v1")])
        try Self.fill(base.path + "/new", ["w.yaml": Self.scenario("w", "v2")])
        let harness = try await Self.watchedServer(scenarios)

        try FileManager.default.removeItem(atPath: scenarios)
        try FileManager.default.moveItem(atPath: base.path + "/new", toPath: scenarios)
        try await Self.expectAnswer(harness, "w", "v2", after: "the folder moved into place")

        try Self.overwrite(scenarios + "/w.yaml", Self.scenario("w", "v3"))
        try await Self.expectAnswer(harness, "w", "v3", after: "an edit after the move")
    }

    /// The old folder moved aside (not deleted) and a new one moved into place: edits to the old
    /// folder, still there under another name, no longer reload anything.
    @Test func oldFolderMovedAside() async throws {
        let base = try TemporaryFolder()
        let scenarios = base.path + "/sc"
        try Self.fill(scenarios, ["w.yaml": Self.scenario("w", "v1")])
        try Self.fill(base.path + "/new", ["w.yaml": Self.scenario("w", "v2")])
        let harness = try await Self.watchedServer(scenarios)

        try FileManager.default.moveItem(atPath: scenarios, toPath: base.path + "/old")
        try FileManager.default.moveItem(atPath: base.path + "/new", toPath: scenarios)
        try await Self.expectAnswer(harness, "w", "v2", after: "the folder moved into place")
        try Self.overwrite(scenarios + "/w.yaml", Self.scenario("w", "v3"))
        try await Self.expectAnswer(harness, "w", "v3", after: "an edit after the move")

        try await Self.expectNoReload(harness, editing: base.path + "/old/w.yaml", "an edit to the folder moved aside reloaded")
    }

    /// A sub-folder removed and made again, then a file in it edited.
    @Test func subfolderRebuilt() async throws {
        let base = try TemporaryFolder()
        let scenarios = base.path + "/sc"
        try Self.fill(scenarios, ["w.yaml": Self.scenario("w", "v1"), "sub/x.yaml": Self.scenario("x", "x1")])
        let harness = try await Self.watchedServer(scenarios)
        try await Self.expectAnswer(harness, "x", "x1", after: "the first load")

        try FileManager.default.removeItem(atPath: scenarios + "/sub")
        try Self.fill(scenarios, ["sub/x.yaml": Self.scenario("x", "x2")])
        try await Self.expectAnswer(harness, "x", "x2", after: "the rebuilt sub-folder")

        try Self.overwrite(scenarios + "/sub/x.yaml", Self.scenario("x", "x3"))
        try await Self.expectAnswer(harness, "x", "x3", after: "an edit in the rebuilt sub-folder")
    }

    /// `--scenarios` a symbolic link, retargeted with rename(2) (`ln -s B tmp && mv -T tmp cur`),
    /// then a file in the new target edited; the old target is no longer watched.
    @Test func symbolicLinkRetargeted() async throws {
        let base = try TemporaryFolder()
        try Self.fill(base.path + "/A", ["w.yaml": Self.scenario("w", "v1")])
        try Self.fill(base.path + "/B", ["w.yaml": Self.scenario("w", "v2")])
        try base.symlink("cur", to: "A")
        let harness = try await Self.watchedServer(base.path + "/cur")
        try await Self.expectAnswer(harness, "w", "v1", after: "the first load")

        try base.symlink("tmp", to: "B")
        #expect(rename(base.path + "/tmp", base.path + "/cur") == 0, "rename: \(String(cString: strerror(errno)))")
        try await Self.expectAnswer(harness, "w", "v2", after: "the retargeted link")

        try Self.overwrite(base.path + "/B/w.yaml", Self.scenario("w", "v3"))
        try await Self.expectAnswer(harness, "w", "v3", after: "an edit in the new target")

        try await Self.expectNoReload(harness, editing: base.path + "/A/w.yaml", "an edit to the old target reloaded")
        try await Self.expectAnswer(harness, "w", "v3", after: "nothing")
    }

    /// The folder above the scenarios folder removed, then, once the watcher has given up on it
    /// (the reload of the missing folder refused), made again with new scenarios: no watch is
    /// left to report that, and the periodic walk of the folders (every 2 s) finds it.
    @Test func folderAboveReplacedLater() async throws {
        let base = try TemporaryFolder()
        let scenarios = base.path + "/p/sc"
        try Self.fill(scenarios, ["w.yaml": Self.scenario("w", "v1")])
        try Self.fill(base.path + "/new/sc", ["w.yaml": Self.scenario("w", "v2")])
        let harness = try await Self.watchedServer(scenarios)

        try FileManager.default.removeItem(atPath: base.path + "/p")
        #expect(await eventually { harness.service.lastReloadFailure != nil }, "the missing folder was not noticed")
        try FileManager.default.moveItem(atPath: base.path + "/new", toPath: base.path + "/p")
        let found = try await eventually(within: .seconds(3)) { try await harness.get("/w").text == "v2" }
        #expect(found, "the new folder was not found within 3 s")
        try Self.overwrite(scenarios + "/w.yaml", Self.scenario("w", "v3"))
        try await Self.expectAnswer(harness, "w", "v3", after: "an edit in the new folder")
    }

    /// Files appearing next to the scenarios folder (its parent is watched for the folder's
    /// own replacement) reload nothing.
    @Test func neighboursIgnored() async throws {
        let base = try TemporaryFolder()
        let scenarios = base.path + "/sc"
        try Self.fill(scenarios, ["w.yaml": Self.scenario("w", "v1")])
        let harness = try await Self.watchedServer(scenarios)

        try Self.fill(base.path, ["neighbour.yaml": "x", "scx/w.yaml": "x"])
        try FileManager.default.removeItem(atPath: base.path + "/scx")
        try await Task.sleep(for: .milliseconds(400))
        #expect(harness.service.reloads == 0)
        #expect(harness.service.lastReloadFailure == nil)
    }
}
