import Foundation
import MishapService
import Testing

/// `ScenarioWatcher` wired to a service as `mishap serve` wires it: edits to the scenarios
/// folder are picked up within a second, broken edits are refused while the last good
/// scenarios keep answering, and the fix is picked up in turn.
@Suite struct WatcherTests {
    static func scenario(_ text: String) -> String {
        """
        endpoint: GET /w
        rules:
          - name: w
            respond: { text: \(text) }
        """
    }

    /// What `GET /w` answers.
    func answer(_ harness: ServiceHarness) async throws -> String {
        let response = try await harness.get("/w")
        return "\(response.status) \(response.text)"
    }

    /// Writes `text` to the scenario file and polls `GET /w` until it answers `expected`; how
    /// long that took from the write, or nil when it did not within 2 s.
    func edit(_ folder: TemporaryFolder, _ text: String, _ harness: ServiceHarness,
              until condition: @escaping () async throws -> Bool) async throws -> Duration? {
        try folder.write("w.yaml", text)
        let written = ContinuousClock.now
        guard try await eventually(within: .seconds(2), condition) else { return nil }
        return written.duration(to: .now)
    }

    func exercise(forcePolling: Bool) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("w.yaml", Self.scenario("v1"))
        let harness = try ServiceHarness(directory: folder.path)
        let service = harness.service
        let watcher = ScenarioWatcher(directory: folder.path) { _ = try? service.reload() }
        try watcher.start(forcePolling: forcePolling)
        defer { watcher.stop() }
        #expect(watcher.mechanism == (forcePolling ? .polling : .inotify))
        #expect(try await answer(harness) == "200 v1")
        // The watching thread sets up (inotify watches, or its first snapshot) after `start()`
        // returns; give it a moment so the first edit is not made before it looks.
        try await Task.sleep(for: .milliseconds(100))

        let picked = try await edit(folder, Self.scenario("v2"), harness) { try await answer(harness) == "200 v2" }
        let pickedAfter = try #require(picked, "the edit to v2 was not picked up within 2 s")
        #expect(pickedAfter < .seconds(1), "picked up after \(pickedAfter)")
        #expect(service.reloads == 1)

        let refused = try await edit(folder, "endpoint: GET /w\nrules:\n  - name: w\n    respond: { status: 1000 }\n", harness) {
            service.lastReloadFailure != nil
        }
        let refusedAfter = try #require(refused, "the broken edit was not noticed within 2 s")
        #expect(refusedAfter < .seconds(1), "noticed after \(refusedAfter)")
        #expect(service.lastReloadFailure?.diagnostics.first?.file == folder.path + "/w.yaml")
        #expect(service.lastReloadFailure?.diagnostics.first?.line == 4)
        #expect(try await answer(harness) == "200 v2")

        let fixed = try await edit(folder, Self.scenario("v3"), harness) { try await answer(harness) == "200 v3" }
        let fixedAfter = try #require(fixed, "the fix was not picked up within 2 s")
        #expect(fixedAfter < .seconds(1), "picked up after \(fixedAfter)")
        #expect(service.lastReloadFailure == nil)
        #expect(service.reloads == 2)
    }

    /// With inotify (`start()`).
    @Test func inotify() async throws {
        try await exercise(forcePolling: false)
    }

    /// With polling (`start(forcePolling: true)`, the default 500 ms interval).
    @Test func polling() async throws {
        try await exercise(forcePolling: true)
    }

    /// A file added in a new sub-folder is picked up too (inotify watches new folders).
    @Test func newSubfolder() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("w.yaml", Self.scenario("v1"))
        let harness = try ServiceHarness(directory: folder.path)
        let service = harness.service
        let watcher = ScenarioWatcher(directory: folder.path) { _ = try? service.reload() }
        try watcher.start()
        defer { watcher.stop() }
        try await Task.sleep(for: .milliseconds(100))

        try FileManager.default.createDirectory(atPath: folder.path + "/more", withIntermediateDirectories: false)
        // Let the watcher see the new folder (and settle) before a file appears in it.
        #expect(await eventually { service.reloads == 1 })
        try folder.write("more/x.yaml", "endpoint: GET /x\nrules:\n  - name: x\n    respond: { text: x }\n")
        #expect(try await eventually(within: .seconds(1)) { try await harness.get("/x").text == "x" })
    }
}
