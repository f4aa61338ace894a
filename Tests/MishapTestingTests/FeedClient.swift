import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A client of a stream of events written as an app's would be, for the tests of MishapTesting:
/// it reads the stream as it comes, and when the connection breaks it waits the last `retry` it
/// was given and connects again with the last `id` as `Last-Event-ID`, as `EventSource` does. A
/// clean end is the end. FoundationNetworking on Linux has no `bytes(for:)`: a data delegate
/// gets the stream piece by piece.
final class FeedClient: Sendable {
    /// One event as read.
    struct Event: Equatable, Sendable {
        var id: String?
        var data: String
    }

    let url: URL
    let configuration: URLSessionConfiguration
    /// How many connections it makes at most.
    let attempts: Int

    init(url: URL, configuration: URLSessionConfiguration, attempts: Int = 3) {
        self.url = url
        self.configuration = configuration
        self.attempts = attempts
    }

    /// Reads the stream to its clean end, reconnecting after each break; the events read.
    /// Throws the last connection's error when it is still broken after `attempts` connections.
    func follow() async throws -> [Event] {
        var events: [Event] = []
        var lastID: String?
        var retry = 1000
        for attempt in 1...attempts {
            var request = URLRequest(url: url)
            if let lastID { request.setValue(lastID, forHTTPHeaderField: "Last-Event-ID") }
            let connection = StreamConnection(request, configuration: configuration)
            let (text, error) = await connection.finished()
            let read = Self.parse(text)
            events += read.events
            lastID = read.lastID ?? lastID
            retry = read.retry ?? retry
            guard let error else { return events }
            if attempt == attempts { throw error }
            try await Task.sleep(for: .milliseconds(retry))
        }
        return events
    }

    /// The whole events in `text` (up to its last blank line), the last `id` and `retry` among them.
    static func parse(_ text: String) -> (events: [Event], lastID: String?, retry: Int?) {
        var events: [Event] = []
        var lastID: String?
        var retry: Int?
        var blocks = text.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n\n")
        blocks.removeLast()  // what follows the last blank line: an event not whole yet
        for block in blocks {
            var event = Event(id: nil, data: "")
            var data: [String] = []
            for line in block.split(separator: "\n") where !line.hasPrefix(":") {
                let parts = line.split(separator: ":", maxSplits: 1).map { $0.drop { $0 == " " } }
                guard parts.count == 2 else { continue }
                switch parts[0] {
                case "id": event.id = String(parts[1])
                case "data": data.append(String(parts[1]))
                case "retry": retry = Int(parts[1])
                default: break
                }
            }
            if let id = event.id { lastID = id }
            guard !data.isEmpty else { continue }
            event.data = data.joined(separator: "\n")
            events.append(event)
        }
        return (events, lastID, retry)
    }
}

/// One connection to a stream: what came, and the error that ended it (nil for a clean end).
/// `cancel()` leaves, as an app leaving the screen would.
final class StreamConnection: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var received = Data()
    private var outcome: (text: String, error: Error?)?
    private var waiting: CheckedContinuation<(text: String, error: Error?), Never>?
    private var task: URLSessionDataTask?

    /// Starts the request at once.
    init(_ request: URLRequest, configuration: URLSessionConfiguration) {
        super.init()
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        let task = session.dataTask(with: request)
        lock.withLock { self.task = task }
        task.resume()
        session.finishTasksAndInvalidate()
    }

    /// What came so far, as text.
    var text: String { lock.withLock { String(decoding: received, as: UTF8.self) } }

    /// Leaves: closes the connection.
    func cancel() { lock.withLock { task }?.cancel() }

    /// Waits for the connection's end: what came, and its error (nil for a clean end).
    func finished() async -> (text: String, error: Error?) {
        await withCheckedContinuation { continuation in
            let done: (text: String, error: Error?)? = lock.withLock {
                if outcome == nil { waiting = continuation }
                return outcome
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { received.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let (done, continuation) = lock.withLock {
            outcome = (String(decoding: received, as: UTF8.self), error)
            defer { waiting = nil }
            return (outcome!, waiting)
        }
        continuation?.resume(returning: done)
    }
}
