import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The read end of a pipe whose write end a log handler writes to.
final class LogPipe: @unchecked Sendable {
    let readEnd: Int32
    let writeEnd: Int32
    private var pending: [UInt8] = []

    init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        readEnd = fds[0]
        writeEnd = fds[1]
        _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// The next complete line, or nil when none arrives within `timeout`.
    func nextLine(timeout: Duration = .seconds(2)) -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeFirst(newline + 1)
                return line
            }
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return nil }
            var descriptor = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000) + 1
            if poll(&descriptor, 1, milliseconds) <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count > 0 { pending += chunk[..<count] }
        }
    }

    /// Parses a line as a JSON object.
    static func object(_ line: String?) -> [String: Any]? {
        line.flatMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }
}
