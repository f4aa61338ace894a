import Dispatch
import Foundation
import MishapEngine
import MishapHTTP
import MishapSupport
import MishapTestSupport
import Synchronization

/// An `HTTPServer` alone whose responder answers every request with the plan a test gives (its
/// network shaping included), and shapes every upload as the test says: the server's part of a
/// network profile, without the service that draws it.
final class ShapingServer: Sendable {
    let server: HTTPServer
    let responder: ShapingResponder
    let observer = ShapingObserver()

    /// `upstream`: the answer a plan sent on to an upstream (`destination` not `.here`) gets,
    /// handed back from another thread with a memory lease, as an upstream's is.
    init(plan: @escaping @Sendable (Request) -> ResponsePlan,
         upload: @escaping @Sendable (Request) -> UploadShaping? = { _ in nil },
         upstream: (@Sendable (Request) -> ResponsePlan)? = nil, log: CapturedLog? = nil) throws {
        responder = ShapingResponder(plan: plan, upload: upload, upstream: upstream)
        server = HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", port: 0, threads: 2),
                            responder: responder, observer: observer, logger: log?.logger ?? quietLogger)
        try server.start()
    }

    deinit { server.stop() }

    var port: UInt16 { server.port ?? 0 }
    func url(_ path: String = "/") -> String { "http://127.0.0.1:\(port)\(path)" }
}

final class ShapingResponder: Responder {
    let plan: @Sendable (Request) -> ResponsePlan
    let upload: @Sendable (Request) -> UploadShaping?
    let upstream: (@Sendable (Request) -> ResponsePlan)?
    private let asked = Mutex<[Request]>([])
    private let budget = MemoryBudget(limit: 64 << 20)

    init(plan: @escaping @Sendable (Request) -> ResponsePlan, upload: @escaping @Sendable (Request) -> UploadShaping?,
         upstream: (@Sendable (Request) -> ResponsePlan)?) {
        self.plan = plan
        self.upload = upload
        self.upstream = upstream
    }

    func forward(_ request: Request, plan: ResponsePlan, client: String, scheme: String,
                 answer: @escaping @Sendable (ResponsePlan, MemoryLease?) -> Void) {
        guard let upstream else { return answer(.error(502, reason: "no upstream"), nil) }
        let lease = budget.lease()
        DispatchQueue.global().async { answer(upstream(request), lease) }
    }

    /// The requests answered, in order.
    var requests: [Request] { asked.withLock { $0 } }

    func respond(to request: Request) -> ResponsePlan {
        asked.withLock { $0.append(request) }
        return plan(request)
    }

    func uploadShaping(for head: Request) -> UploadShaping? { upload(head) }
}

final class ShapingObserver: RequestObserver {
    private let seen = Mutex<(completed: [CompletedRequest], incomplete: [Request])>(([], []))

    var completed: [CompletedRequest] { seen.withLock { $0.completed } }
    /// Requests whose body never came whole, with what arrived of it.
    var incomplete: [Request] { seen.withLock { $0.incomplete } }

    func completed(_ request: CompletedRequest) { seen.withLock { $0.completed.append(request) } }
    func incomplete(_ request: Request, record: CompletedRequest) { seen.withLock { $0.incomplete.append(request) } }
}

/// A body of `count` bytes that is not all the same byte, so a piece out of place shows.
func patternedBody(_ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 % 251) }
}

/// What a curl run showed: its exit status, what `-w` wrote, its stderr, and how long it took.
struct CurlRun {
    let status: Int32
    let output: String
    let errors: String
    let elapsed: Duration
    /// The body curl wrote to its output file.
    let body: [UInt8]

    /// The `-w` fields, split on spaces.
    var fields: [String] { output.split(separator: " ").map(String.init) }
}

/// Runs curl (blocking) with `arguments`, its body written to a temporary file, and
/// `-w "%{http_code} %{size_download}"` unless other `-w` is given. Its output goes to files,
/// not pipes: a pipe's write end inherited by another test's curl, started at the same moment,
/// would hold this one's reading until that curl ends (seen: 10 s, the length of the longest).
func curl(_ arguments: [String], maxTime: Int = 60) throws -> CurlRun {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let body = folder.appendingPathComponent("body")
    let output = folder.appendingPathComponent("stdout")
    let errors = folder.appendingPathComponent("stderr")
    var all = ["curl", "-sS", "--max-time", String(maxTime), "-o", body.path]
    if !arguments.contains("-w") { all += ["-w", "%{http_code} %{size_download}"] }
    let start = ContinuousClock.now
    let status = try spawnAndWait(all + arguments, standardOutput: output.path, standardError: errors.path)
    let elapsed = start.duration(to: .now)
    return CurlRun(status: status,
                   output: (try? String(contentsOf: output, encoding: .utf8)) ?? "",
                   errors: String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self), elapsed: elapsed,
                   body: (try? Data(contentsOf: body)).map { [UInt8]($0) } ?? [])
}

/// Writes `bytes` to a temporary file for `curl --data-binary @path`; removed by the caller.
func temporaryFile(_ bytes: [UInt8]) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString)")
    try Data(bytes).write(to: url)
    return url
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
