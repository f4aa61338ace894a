// What the subcommands share: error lines, the connection limit that fits, loopback hosts.

import Logging
import MishapSupport

/// Writes a line to standard error.
func printError(_ message: String) {
    _ = FileDescriptor.writeAll(2, message + "\n")
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

/// Whether a --host value only accepts connections from this machine.
func isLoopback(host: String) -> Bool {
    host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
}
