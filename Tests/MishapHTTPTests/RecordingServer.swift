import Foundation
import MishapEngine
import MishapHTTP
import MishapTestSupport
import Synchronization

/// An `HTTPServer` alone (no service, no scenarios) whose responder records every request it is
/// asked about and answers 200 with what it saw, and whose observer records every request the
/// server is done with: what reaches the engine, and what reaches the request log.
final class RecordingServer: Sendable {
    let server: HTTPServer
    let responder = RecordingResponder()
    let observer = RecordingObserver()

    /// Starts on `host` and a free port.
    init(host: String = "127.0.0.1", maxBodyBytes: Int = 10 << 20) throws {
        server = HTTPServer(configuration: ServerConfiguration(host: host, port: 0, threads: 1, maxBodyBytes: maxBodyBytes),
                            responder: responder, observer: observer, logger: quietLogger)
        try server.start()
    }

    deinit { server.stop() }

    /// The port listened on.
    var port: UInt16 { server.port ?? 0 }
}

/// Records each request and answers 200 with a JSON summary of it.
final class RecordingResponder: Responder {
    private let seen = Mutex<[Request]>([])

    /// The requests asked about, in order.
    var requests: [Request] { seen.withLock { $0 } }

    func respond(to request: Request) -> ResponsePlan {
        seen.withLock { $0.append(request) }
        let summary: [String: Any] = [
            "method": request.method, "path": request.path, "fromLoopback": request.fromLoopback,
            "query": request.query.map { [$0.name, $0.value] },
        ]
        let body = (try? JSONSerialization.data(withJSONObject: summary)) ?? Data()
        return ResponsePlan(status: 200, headers: [Field("Content-Type", "application/json")], body: Array(body))
    }
}

/// Records what the server tells the request log.
final class RecordingObserver: RequestObserver {
    private let seen = Mutex<[CompletedRequest]>([])

    /// The requests completed, in order.
    var completed: [CompletedRequest] { seen.withLock { $0 } }

    func completed(_ request: CompletedRequest) {
        seen.withLock { $0.append(request) }
    }
}
