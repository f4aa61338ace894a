import Foundation
import MishapService
import MishapTestSupport
import Testing

/// The scenarios folder watched as `mishap serve` watches it (`MishapInstance` with a watch
/// mode): edits to the folder are picked up within a second, broken edits are refused while
/// the last good scenarios keep answering, and the fix is picked up in turn.
@Suite(.onBlockingThreads) struct WatcherTests {
    static func scenario(_ text: String) -> String {
        """
        endpoint: GET /w
        rules:
          - name: w
            respond: { text: \(text) }
        """
    }

    /// What `GET /w` answers.
    func answer(_ harness: TestServer) async throws -> String {
        let response = try await harness.get("/w")
        return "\(response.status) \(response.text)"
    }

    /// A server for a folder holding `w.yaml` (answering `v1`), watched with `mode`, once the
    /// watching thread has set up (inotify watches, or its first snapshot: that happens after
    /// the watcher has started, so the first edit must not be made before it looks).
    func watchedServer(_ folder: TemporaryFolder, _ mode: MishapInstance.WatchMode) async throws -> TestServer {
        try folder.write("w.yaml", Self.scenario("v1"), inPlace: true)
        let harness = try TestServer(directory: folder.path, watch: mode)
        try await Task.sleep(for: .milliseconds(100))
        return harness
    }

    /// Writes `text` in place to the scenario file and polls until `condition` holds; how long
    /// that took from the write, or nil when it did not within 5 s.
    /// How soon a change must be picked up: within a second (inotify: the 100 ms settle time;
    /// polling: one 500 ms interval and the settle time), plus the 2 s a loaded machine may
    /// stall a thread (`make test-under-load`).
    static let bound = Duration.seconds(3)

    func edit(_ folder: TemporaryFolder, _ text: String, _ harness: TestServer,
              until condition: @escaping () async throws -> Bool) async throws -> Duration? {
        try folder.write("w.yaml", text, inPlace: true)
        let written = ContinuousClock.now
        guard try await eventually(within: .seconds(5), condition) else { return nil }
        return written.duration(to: .now)
    }

    func exercise(forcePolling: Bool) async throws {
        let folder = try TemporaryFolder()
        let harness = try await watchedServer(folder, forcePolling ? .poll : .auto)
        let service = harness.service
        #expect(harness.instance.watcher?.mechanism == (forcePolling ? .polling : .inotify))
        #expect(try await answer(harness) == "200 v1")

        // Timed by the service's own count, not by a client's round trips: on a loaded machine
        // URLSession's one shared thread, busy with every other test, made the answer seconds late.
        let picked = try await edit(folder, Self.scenario("v2"), harness) { service.reloads == 1 }
        let pickedAfter = try #require(picked, "the edit to v2 was not picked up within 5 s")
        #expect(pickedAfter < Self.bound, "picked up after \(pickedAfter)")
        #expect(try await answer(harness) == "200 v2")
        #expect(service.reloads == 1)

        let refused = try await edit(folder, "endpoint: GET /w\nrules:\n  - name: w\n    respond: { status: 1000 }\n", harness) {
            service.lastReloadFailure != nil
        }
        let refusedAfter = try #require(refused, "the broken edit was not noticed within 5 s")
        #expect(refusedAfter < Self.bound, "noticed after \(refusedAfter)")
        #expect(service.lastReloadFailure?.diagnostics.first?.file == folder.path + "/w.yaml")
        #expect(service.lastReloadFailure?.diagnostics.first?.line == 4)
        #expect(try await answer(harness) == "200 v2")

        let fixed = try await edit(folder, Self.scenario("v3"), harness) { service.reloads == 2 }
        let fixedAfter = try #require(fixed, "the fix was not picked up within 5 s")
        #expect(fixedAfter < Self.bound, "picked up after \(fixedAfter)")
        #expect(try await answer(harness) == "200 v3")
        #expect(service.lastReloadFailure == nil)
        #expect(service.reloads == 2)
    }

    /// With inotify (`auto`).
    @Test func inotify() async throws {
        try await exercise(forcePolling: false)
    }

    /// With polling (`poll`, the default 500 ms interval).
    @Test func polling() async throws {
        try await exercise(forcePolling: true)
    }

    /// A file added in a new sub-folder is picked up too (inotify watches new folders).
    @Test func newSubfolder() async throws {
        let folder = try TemporaryFolder()
        let harness = try await watchedServer(folder, .auto)
        let service = harness.service

        try FileManager.default.createDirectory(atPath: folder.path + "/more", withIntermediateDirectories: false)
        // Let the watcher see the new folder (and settle) before a file appears in it.
        #expect(await eventually { service.reloads == 1 })
        try folder.write("more/x.yaml", "endpoint: GET /x\nrules:\n  - name: x\n    respond: { text: x }\n", inPlace: true)
        #expect(try await eventually(within: .seconds(3)) { try await harness.get("/x").text == "x" })
    }
}
