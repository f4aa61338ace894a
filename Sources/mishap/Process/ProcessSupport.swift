// What the subcommands share: error lines, the connection limit that fits, loopback hosts.

import Logging
import MishapService
import MishapSupport

/// How `printError` writes: plain lines, or, under `serve --log-format json`, JSON log lines like
/// every other line the server writes. Set once, before any other thread starts.
nonisolated(unsafe) var errorLineFormat: LineLogHandler.Format = .text

/// Writes a line to standard error: the message as it is, or as a JSON log line at `error` level
/// (with `metadata`, such as located problems) when `errorLineFormat` is JSON.
func printError(_ message: String, metadata: Logger.Metadata = [:]) {
    switch errorLineFormat {
    case .text:
        _ = FileDescriptor.writeAll(2, message + "\n")
    case .json:
        var logger = Logger(label: "mishap") { label in LineLogHandler(label: label, level: .trace, format: .json) }
        logger.logLevel = .trace
        let text = message.hasPrefix("mishap: ") ? String(message.dropFirst("mishap: ".count)) : message
        logger.error("\(text)", metadata: metadata)
    }
}

/// Raises the soft limit on open descriptors toward the hard one so `wanted` connections fit,
/// and returns the connection limit that does fit (with a warning when it is lower).
func raiseDescriptorLimit(for wanted: Int, logger: Logger) -> Int {
    // Besides connections: the listener, epoll and wake-up descriptors per thread, the
    // scenario watcher, logs, and files read on reload.
    let (fitting, limit) = OpenFileLimit.raise(toFit: wanted, reserve: 64)
    if fitting < wanted {
        logger.warning("--connection-limit \(wanted) does not fit the open-file limit (\(limit.map(String.init) ?? "?")); using \(fitting)")
    }
    return fitting
}
