import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Where the repository and the built `mishap` binary are.
public enum Paths {
    /// The repository root, three levels up from this file.
    public static let repository: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The repository's default scenarios folder.
    public static let scenarios = repository + "/scenarios"

    /// The `mishap` executable built next to this test bundle (`swift build --build-tests` builds
    /// both into the same folder), or `MISHAP_BINARY` when set.
    public static let mishap: String? = {
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
public final class ChildProcess {
    public let process = Process()
    private let folder: URL
    private let outputURL: URL
    private let errorURL: URL

    /// `environment` adds to (or replaces entries of) the test process's own environment.
    public init(_ executable: String, _ arguments: [String], currentDirectory: String? = nil,
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
    public static func mishap(_ arguments: [String], currentDirectory: String? = nil, environment: [String: String] = [:],
                              sourceLocation: SourceLocation = #_sourceLocation) throws -> ChildProcess {
        let binary = try #require(Paths.mishap, "the mishap binary was not found next to the test bundle; run swift build --build-tests",
                                  sourceLocation: sourceLocation)
        return try ChildProcess(binary, arguments, currentDirectory: currentDirectory, environment: environment)
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: folder)
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    public var standardOutput: String { (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "" }
    public var standardError: String { (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "" }

    /// Sends a signal to the process, if it still runs.
    public func signal(_ number: Int32) {
        // Never pid 0: kill(0, ...) signals this whole process group.
        guard process.isRunning, process.processIdentifier > 0 else { return }
        _ = Glibc.kill(process.processIdentifier, number)
    }

    /// Kills the process (SIGKILL) if it still runs, and reaps it.
    public func kill() {
        guard process.isRunning, process.processIdentifier > 0 else { return }
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
    }

    /// Waits until the process exits; false when it still runs after `timeout`.
    public func waitForExit(timeout: Duration) async -> Bool {
        await eventually(within: timeout, every: .milliseconds(20)) { !process.isRunning }
    }

    /// The first complete line of standard output, waiting up to `timeout` (nil if the process
    /// exits or the time runs out first).
    public func firstOutputLine(timeout: Duration) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let output = standardOutput
            if let newline = output.firstIndex(of: "\n") { return String(output[..<newline]) }
            if !process.isRunning || ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Exit status once exited normally; nil while running or when killed by a signal.
    public var exitStatus: Int32? {
        guard !process.isRunning, process.terminationReason == .exit else { return nil }
        return process.terminationStatus
    }
}

/// What a finished command did.
public struct Finished: Sendable {
    /// The exit status, or nil when the process did not exit normally in time.
    public let status: Int32?
    public let standardOutput: String
    public let standardError: String

    public init(status: Int32?, standardOutput: String, standardError: String) {
        self.status = status
        self.standardOutput = standardOutput
        self.standardError = standardError
    }
}

/// Runs a command to completion (killed after `timeout`).
public func run(_ executable: String, _ arguments: [String], currentDirectory: String? = nil,
                environment: [String: String] = [:], timeout: Duration = .seconds(30)) async throws -> Finished {
    let child = try ChildProcess(executable, arguments, currentDirectory: currentDirectory, environment: environment)
    defer { child.kill() }
    let exited = await child.waitForExit(timeout: timeout)
    return Finished(status: exited ? child.exitStatus : nil,
                    standardOutput: child.standardOutput, standardError: child.standardError)
}

/// Runs the built `mishap` binary to completion.
public func runMishap(_ arguments: [String], currentDirectory: String? = nil, environment: [String: String] = [:],
                      timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation) async throws -> Finished {
    let binary = try #require(Paths.mishap, "the mishap binary was not found next to the test bundle",
                              sourceLocation: sourceLocation)
    return try await run(binary, arguments, currentDirectory: currentDirectory, environment: environment, timeout: timeout)
}

/// The port in `mishap listening on http://127.0.0.1:PORT` (or in the `url` of that line as JSON,
/// under `--log-format json`), or nil when the line is not that.
public func listeningPort(_ line: String) -> UInt16? {
    let prefix = "http://127.0.0.1:"
    guard let url = listeningURL(line), url.hasPrefix(prefix) else { return nil }
    let digits = url.dropFirst(prefix.count)
    guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
    return UInt16(digits)
}

/// A server started with `ChildProcess.serving` printed no listening line.
public struct NotListening: Error {
    public init() {}
}

/// The URL in a `mishap listening on URL` line (followed or not by ` (pin ...)`), or in the
/// `url` of that line as JSON under `--log-format json`; nil when the line is not that.
public func listeningURL(_ line: String) -> String? {
    if line.hasPrefix("{"), let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
       let url = object["url"] as? String, object["message"] as? String == "mishap listening on \(url)" {
        return url
    }
    let prefix = "mishap listening on "
    guard line.hasPrefix(prefix) else { return nil }
    let url = line.dropFirst(prefix.count).prefix { $0 != " " }
    return url.hasPrefix("http://") || url.hasPrefix("https://") ? String(url) : nil
}

extension ChildProcess {
    /// Starts the built `mishap` with `arguments` (`serve`, `record`...) and waits for its
    /// listening line: the process, the URL the line names (any host) and its port. When no
    /// line comes the process is killed and `NotListening` thrown, after `attempts` tries half a
    /// second apart (more than one for a fixed port another process may hold for a moment).
    /// The one way the command-line tests start a server.
    public static func serving(_ arguments: [String], environment: [String: String] = [:], attempts: Int = 1,
                               sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> (process: ChildProcess, url: String, port: UInt16) {
        for attempt in 1...max(1, attempts) {
            let server = try ChildProcess.mishap(arguments, environment: environment, sourceLocation: sourceLocation)
            if let line = await server.firstOutputLine(timeout: .seconds(30)), let url = listeningURL(line),
               let port = url.split(separator: ":").last.flatMap({ UInt16($0) }), port != 0 {
                return (server, url, port)
            }
            server.kill()
            if attempt == max(1, attempts) {
                let command = arguments.joined(separator: " ")
                Issue.record("no listening line from mishap \(command); stdout: \(server.standardOutput) stderr: \(server.standardError)",
                             sourceLocation: sourceLocation)
            } else {
                try await Task.sleep(for: .milliseconds(500))
            }
        }
        throw NotListening()
    }
}
