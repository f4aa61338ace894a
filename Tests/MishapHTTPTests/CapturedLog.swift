import Logging
import Synchronization

/// What a server logs, kept for a test to read: every message from `level` up, with its
/// metadata, in order.
final class CapturedLog: Sendable {
    /// One message.
    struct Event: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]
    }

    private let events = Mutex<[Event]>([])
    private let level: Logger.Level

    init(level: Logger.Level = .info) {
        self.level = level
    }

    /// A logger writing here.
    var logger: Logger {
        var logger = Logger(label: "mishap") { _ in Handler(log: self, logLevel: self.level) }
        logger.logLevel = level
        return logger
    }

    /// Every message so far.
    var all: [Event] { events.withLock { $0 } }

    /// The messages at `level`.
    func events(at level: Logger.Level) -> [Event] {
        all.filter { $0.level == level }
    }

    fileprivate func record(_ event: Event) {
        events.withLock { $0.append(event) }
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var logLevel: Logger.Level
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var all = metadata
            if let extra = event.metadata { all.merge(extra) { _, new in new } }
            log.record(Event(level: event.level, message: "\(event.message)",
                             metadata: all.mapValues { "\($0)" }))
        }
    }
}
