import Foundation
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Where the repository and the built `mishap` binary are.
enum Paths {
    /// The repository root, three levels up from this file.
    static let repository: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The repository's default scenarios folder.
    static let scenarios = repository + "/scenarios"

    /// The `mishap` executable built next to this test bundle (`swift build --build-tests` builds
    /// both into the same folder), or `MISHAP_BINARY` when set.
    static let mishap: String? = {
        let fileManager = FileManager.default
        if let override = ProcessInfo.processInfo.environment["MISHAP_BINARY"], !override.isEmpty {
            return override
        }
        var starts: [String] = []
        if let first = CommandLine.arguments.first, !first.isEmpty { starts.append(first) }
        if let executable = Bundle.main.executablePath { starts.append(executable) }
        starts.append(Bundle.main.bundlePath)
        if let me = try? fileManager.destinationOfSymbolicLink(atPath: "/proc/self/exe") { starts.append(me) }
        for start in starts {
            var url = URL(fileURLWithPath: start).standardizedFileURL.resolvingSymlinksInPath()
            // Walk up a few folders: the bundle may be `debug/X.xctest` or `debug/X.xctest/Contents/MacOS/X`.
            for _ in 0..<6 {
                url = url.deletingLastPathComponent()
                let candidate = url.appendingPathComponent("mishap").path
                var isDirectory: ObjCBool = false
                if fileManager.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                   fileManager.isExecutableFile(atPath: candidate) {
                    return candidate
                }
                if url.path == "/" { break }
            }
        }
        return nil
    }()
}

/// A child process whose standard output and error go to files, so nothing can block on a full
/// pipe; every wait is bounded.
final class ChildProcess {
    let process = Process()
    private let folder: URL
    private let outputURL: URL
    private let errorURL: URL

    /// `environment` adds to (or replaces entries of) the test process's own environment.
    init(_ executable: String, _ arguments: [String], currentDirectory: String? = nil,
         environment: [String: String] = [:]) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("mishap-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        outputURL = folder.appendingPathComponent("stdout")
        errorURL = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputURL)
        let error = try FileHandle(forWritingTo: errorURL)
        defer {
            try? output.close()
            try? error.close()
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = error
        try process.run()
    }

    /// Starts the built `mishap` binary.
    static func mishap(_ arguments: [String], currentDirectory: String? = nil, environment: [String: String] = [:],
                       sourceLocation: SourceLocation = #_sourceLocation) throws -> ChildProcess {
        let binary = try #require(Paths.mishap, "the mishap binary was not found next to the test bundle; run swift build --build-tests",
                                  sourceLocation: sourceLocation)
        return try ChildProcess(binary, arguments, currentDirectory: currentDirectory, environment: environment)
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: folder)
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    var standardOutput: String { (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "" }
    var standardError: String { (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "" }

    /// Sends a signal to the process, if it still runs.
    func signal(_ number: Int32) {
        guard process.isRunning else { return }
        _ = Glibc.kill(process.processIdentifier, number)
    }

    /// Kills the process (SIGKILL) if it still runs, and reaps it.
    func kill() {
        guard process.isRunning else { return }
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
    }

    /// Waits until the process exits; false when it still runs after `timeout`.
    func waitForExit(timeout: Duration) async -> Bool {
        await eventually(within: timeout, every: .milliseconds(20)) { !process.isRunning }
    }

    /// The first complete line of standard output, waiting up to `timeout` (nil if the process
    /// exits or the time runs out first).
    func firstOutputLine(timeout: Duration) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let output = standardOutput
            if let newline = output.firstIndex(of: "\n") { return String(output[..<newline]) }
            if !process.isRunning || ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Exit status once exited normally; nil while running or when killed by a signal.
    var exitStatus: Int32? {
        guard !process.isRunning, process.terminationReason == .exit else { return nil }
        return process.terminationStatus
    }
}

/// What a finished command did.
struct Finished {
    /// The exit status, or nil when the process did not exit normally in time.
    let status: Int32?
    let standardOutput: String
    let standardError: String
}

/// Runs a command to completion (killed after `timeout`).
func run(_ executable: String, _ arguments: [String], currentDirectory: String? = nil,
         environment: [String: String] = [:], timeout: Duration = .seconds(30)) async throws -> Finished {
    let child = try ChildProcess(executable, arguments, currentDirectory: currentDirectory, environment: environment)
    defer { child.kill() }
    let exited = await child.waitForExit(timeout: timeout)
    return Finished(status: exited ? child.exitStatus : nil,
                    standardOutput: child.standardOutput, standardError: child.standardError)
}

/// Runs the built `mishap` binary to completion.
func runMishap(_ arguments: [String], currentDirectory: String? = nil, environment: [String: String] = [:],
               timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation) async throws -> Finished {
    let binary = try #require(Paths.mishap, "the mishap binary was not found next to the test bundle",
                              sourceLocation: sourceLocation)
    return try await run(binary, arguments, currentDirectory: currentDirectory, environment: environment, timeout: timeout)
}

/// The port in `mishap listening on http://127.0.0.1:PORT` (or in the `url` of that line as JSON,
/// under `--log-format json`), or nil when the line is not that.
func listeningPort(_ line: String) -> UInt16? {
    if line.hasPrefix("{"), let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
       object["message"] as? String == "mishap listening on \(object["url"] as? String ?? "")", let url = object["url"] as? String {
        return listeningPort("mishap listening on " + url)
    }
    let prefix = "mishap listening on http://127.0.0.1:"
    guard line.hasPrefix(prefix) else { return nil }
    let digits = line.dropFirst(prefix.count)
    guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
    return UInt16(digits)
}

/// What a block-style scenario file declares, read line by line: the line of `endpoint:` and the
/// `  - name: X` rule names in order.
struct DeclaredScenario {
    var endpointLine = 0
    var ruleNames: [String] = []

    /// The repository's default scenario files, in path order, and their endpoints.
    static let defaultFiles = [("isUserNameAvailable.yaml", "GET /isUserNameAvailable"), ("login.yaml", "POST /login"),
                               ("me.yaml", "GET /me"), ("search.yaml", "GET /search"), ("token.yaml", "POST /token")]

    /// The repository's default scenario files, in path order.
    static var defaults: [DeclaredScenario] {
        get throws {
            try defaultFiles.map { try DeclaredScenario(path: Paths.scenarios + "/" + $0.0) }
        }
    }

    init(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("endpoint:") && endpointLine == 0 { endpointLine = index + 1 }
            if line.hasPrefix("  - name: ") {
                ruleNames.append(line.dropFirst("  - name: ".count).split(separator: " ").first.map(String.init) ?? "")
            }
        }
    }
}
