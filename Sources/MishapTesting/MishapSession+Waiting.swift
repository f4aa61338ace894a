import Foundation

extension MishapSession {
    /// This session's requests (see `RunningMishap.requests`), oldest first; each filter given
    /// must match. Throws `MishapSessionError.noServer` for a session made on its own.
    public func requests(path: String? = nil, method: String? = nil, rule: String? = nil,
                         endpoint: String? = nil) throws -> [RecordedRequest] {
        try requireServer().requests(path: path, method: method, session: self, rule: rule, endpoint: endpoint)
    }

    /// Waits until one of this session's requests matching the filters also satisfies
    /// `condition`, and returns the newest that does. A stream's or a socket's entry changes
    /// while it goes on, so a test can wait for what it needs before it acts, rather than sleep:
    ///
    /// ```swift
    /// let feed = try await session.waitForRequest(path: "/feed") { ($0.eventStream?.eventsSent ?? 0) >= 3 }
    /// ```
    ///
    /// Looks every 10 ms; throws `RequestWaitTimeout` (saying what the matching requests were
    /// at the end) when `timeout` passes first, and `MishapSessionError.noServer` for a session
    /// made on its own.
    public func waitForRequest(path: String? = nil, method: String? = nil, rule: String? = nil, endpoint: String? = nil,
                               timeout: Duration = .seconds(10),
                               where condition: (RecordedRequest) -> Bool = { _ in true }) async throws -> RecordedRequest {
        let server = try requireServer()
        let deadline = ContinuousClock.now + timeout
        while true {
            let requests = server.requests(path: path, method: method, session: self, rule: rule, endpoint: endpoint)
            if let found = requests.last(where: condition) { return found }
            if ContinuousClock.now >= deadline { throw RequestWaitTimeout(timeout: timeout, seen: requests) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// `waitForRequest` waited its whole timeout: no request matching its filters satisfied its
/// condition. Its description lists the matching requests as they were last, to show how far
/// they got (the events a stream had sent, the messages a socket had passed).
public struct RequestWaitTimeout: Error, Sendable, CustomStringConvertible {
    /// How long it waited.
    public let timeout: Duration
    /// The requests matching the filters when it gave up, oldest first.
    public let seen: [RecordedRequest]

    public var description: String {
        guard !seen.isEmpty else { return "no request matched within \(timeout)" }
        let lines = seen.suffix(10).map { request -> String in
            var line = "#\(request.id) \(request.method) \(request.path) status \(request.status.map(String.init) ?? "none")"
            if let stream = request.eventStream {
                line += ", events sent: \(stream.eventsSent), " + (stream.ending.map { "ended: \($0.rawValue)" } ?? "live")
            }
            if let socket = request.webSocket {
                line += ", messages: \(socket.sentCount) sent, \(socket.receivedCount) received, "
                    + (socket.ending.map { "ended: \($0.how.rawValue)" } ?? "open")
            }
            return line
        }
        return "no request satisfied the condition within \(timeout); the last of those matching:\n" + lines.joined(separator: "\n")
    }
}
