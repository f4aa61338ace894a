import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `mishap record` never writes through a symbolic link planted in its `--out` folder (a shared
/// folder such as `/tmp/rec` that someone else can write to): neither at the temporary name a
/// file is written under before its rename, nor as the `files/` folder of bodies. A file outside
/// `--out` is never overwritten.
@Suite("mishap record and planted links", .onBlockingThreads)
struct RecordSymlinkTests {
    /// Symbolic links at the temporary names an earlier version used (`NAME.tmpPID`, for the
    /// recorder's own pid), pointing at a file outside `--out`: the recording is written, the
    /// file outside keeps its contents, and the links are left as they were.
    @Test("a link planted at the temporary name is not followed")
    func plantedTemporaryLink() async throws {
        let folder = try TemporaryFolder()
        let (upstream, upstreamPort) = try await RecordTests.startUpstream(folder)
        defer { upstream.kill() }
        let victim = try folder.write("victim.txt", "precious\n")
        let out = folder.path + "/recorded"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let (recorder, port) = try await ServeTests.startServer(
            ["record", "--upstream", "http://127.0.0.1:\(upstreamPort)", "--out", out, "--port", "0"])
        defer { recorder.kill() }
        let planted = ["get_items.yaml", "get_logo.png.yaml"].map { "\(out)/\($0).tmp\(recorder.pid)" }
        for link in planted { #expect(symlink(victim, link) == 0) }

        #expect(try await RecordTests.fetch(port, ("GET", "/items", nil)).status == 200)
        #expect(try await RecordTests.fetch(port, ("GET", "/logo.png", nil)).status == 200)
        _ = await RecordTests.stop(recorder)

        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        let recorded = try String(contentsOfFile: out + "/get_items.yaml", encoding: .utf8)
        #expect(recorded.contains("endpoint: \"GET /items\""), "\(recorded)")
        for link in planted {
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == victim)
        }
        let validated = try await runMishap(["validate", out])
        #expect(validated.status == 0, "\(validated)")
    }

    /// A `files` link planted in `--out` to a folder outside it: the body file is refused with
    /// the reason (the answer still goes to the client), and nothing is written outside.
    @Test("a files/ link planted in --out is refused")
    func plantedBodyFolderLink() async throws {
        let folder = try TemporaryFolder()
        let (upstream, upstreamPort) = try await RecordTests.startUpstream(folder)
        defer { upstream.kill() }
        let outside = folder.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let out = folder.path + "/recorded"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let (recorder, port) = try await ServeTests.startServer(
            ["record", "--upstream", "http://127.0.0.1:\(upstreamPort)", "--out", out, "--port", "0"])
        defer { recorder.kill() }
        #expect(symlink(outside, out + "/files") == 0)

        // A PNG is not text: its body goes to files/.
        #expect(try await RecordTests.fetch(port, ("GET", "/logo.png", nil)).status == 200)
        _ = await RecordTests.stop(recorder)

        #expect(try FileManager.default.contentsOfDirectory(atPath: outside) == [])
        #expect(recorder.standardError.contains("\(out)/files is a symbolic link"), "\(recorder.standardError)")
    }
}
