import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import MishapEngine
@_exported import struct MishapScenarios.ScenarioError
@_exported import struct MishapScenarios.ScenarioDiagnostic
@_exported import struct MishapService.CORSPolicy
@_exported import enum MishapEngine.StateValue
@_exported import struct MishapEngine.StateUpdateError
@_exported import struct MishapEngine.NearMiss
@_exported import struct MishapService.UnmatchedRequest
import MishapScenarios
import MishapHTTP
import MishapService

/// Mishap inside a test: a real server on 127.0.0.1 and a free port, in this process.
///
/// ```swift
/// try await Mishap.withServer(scenarios: .directory("scenarios")) { mishap in
///     let session = mishap.session()            // this test's own cycles and journal
///     let client = MyClient(baseURL: mishap.baseURL, configuration: session.configuration)
///     ...
///     #expect(try mishap.retries(session: session).allSatisfy { $0.honoured != false })
/// }
/// ```
public enum Mishap {
    /// Where the scenarios come from.
    public enum Scenarios: Sendable {
        /// A folder of scenario files: an absolute path, or one relative to the test process's
        /// current folder (which `swift test` and Xcode choose, not you: prefer
        /// `directory(_:relativeTo:)`). Edits are picked up when `watch` is on, or by `reload()`.
        case directory(String)
        /// Scenario text (`name` stands for the file in error messages).
        case yaml(String, name: String = "inline.yaml")

        /// A folder of scenario files given relative to a source file, normally the test file
        /// itself: `.directory("Fixtures/scenarios", relativeTo: #filePath)` is the folder
        /// `Fixtures/scenarios` beside the test file, wherever the tests run from. An absolute
        /// `path` is used as it is.
        public static func directory(_ path: String, relativeTo filePath: String) -> Scenarios {
            if path.hasPrefix("/") { return .directory(path) }
            let folder = filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            return .directory((folder.isEmpty ? "." : folder) + "/" + path)
        }
    }

    /// Starts a server, runs `body` with it, and stops it, also when `body` throws. Stopping
    /// never waits for delayed or hanging requests.
    ///
    /// A `body` whose only `try` is inside `#expect(...)` is not inferred as throwing (a Swift
    /// limitation with macros in closures): put the `try` in a `let`, or write
    /// `{ mishap async throws in ... }`.
    @discardableResult
    public static func withServer<T>(
        scenarios: Scenarios,
        options: MishapOptions = MishapOptions(),
        _ body: (RunningMishap) async throws -> T
    ) async throws -> T {
        let mishap = try start(scenarios: scenarios, options: options)
        do {
            let result = try await body(mishap)
            mishap.stop()
            return result
        } catch {
            mishap.stop()
            throw error
        }
    }

    /// Starts a server and returns once it accepts connections; call `stop()` when done.
    /// Throws `ScenarioError` (with `path:line:column` messages) when the scenarios have problems.
    public static func start(scenarios: Scenarios, options: MishapOptions = MishapOptions()) throws -> RunningMishap {
        try RunningMishap(scenarios: scenarios, options: options)
    }
}
