import Foundation
import Logging
import Synchronization

/// The server's side of its open connections: sockets of this process whose local port is
/// `port`, the listening one excluded. Clients in the same process use other local ports, so
/// neither they nor other tests' servers are counted.
func openServerConnections(port: UInt16) -> Int {
    var inodes = Set<Substring>()
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    for fd in fds {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd),
              target.hasPrefix("socket:[") else { continue }
        inodes.insert(Substring(target.dropFirst(8).dropLast()))
    }
    let portHex = String(format: ":%04X", port)
    var count = 0
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
        for line in text.split(separator: "\n").dropFirst() {
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            // sl, local_address, rem_address, st, tx:rx, tr:when, retrnsmt, uid, timeout, inode
            guard columns.count > 9, columns[1].hasSuffix(portHex), columns[3] != "0A",
                  inodes.contains(columns[9]) else { continue }
            count += 1
        }
    }
    return count
}

/// Open descriptors of this process (all kinds), for the report.
func openDescriptorCount() -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
}

/// The lines libmicrohttpd logs through the server's logger (at debug level), counted by
/// message: what it refused, and whether the application ever failed a request. What else is
/// logged through the same logger (the service's request lines) is left out.
final class DaemonLog: Sendable {
    private let lines = Mutex<[String: Int]>([:])

    /// A logger for the server that records libmicrohttpd's messages.
    var logger: Logger {
        var logger = Logger(label: "mishap.server") { _ in Handler(log: self) }
        logger.logLevel = .debug
        return logger
    }

    var counts: [String: Int] { lines.withLock { $0 } }

    /// Messages containing `text`, in total.
    func count(containing text: String) -> Int {
        lines.withLock { $0.filter { $0.key.contains(text) }.values.reduce(0, +) }
    }

    fileprivate func record(_ message: String) {
        lines.withLock { $0[message, default: 0] += 1 }
    }

    private struct Handler: LogHandler {
        let log: DaemonLog
        var logLevel: Logger.Level = .debug
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            guard event.metadata?["source"] == "libmicrohttpd" else { return }
            log.record("\(event.message)")
        }
    }
}
