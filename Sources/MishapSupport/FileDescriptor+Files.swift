#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Descriptors of files kept open (pid files, a log file handed to a child): opening, locking,
// reading and rewriting them in place.
extension FileDescriptor {
    /// How a file is opened; every mode closes on exec.
    public enum OpenMode {
        /// Reading only.
        case read
        /// Reading and writing, created (0644) when missing.
        case readWriteCreating
        /// Appending, created (0644) when missing.
        case appendCreating
    }

    /// Opens the file at `path`; nil on an error (`Platform.lastError` says which).
    public static func open(_ path: String, _ mode: OpenMode) -> Int32? {
        let descriptor: Int32
        switch mode {
        case .read: descriptor = openFile(path, O_RDONLY | O_CLOEXEC, 0)
        case .readWriteCreating: descriptor = openFile(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        case .appendCreating: descriptor = openFile(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        }
        return descriptor >= 0 ? descriptor : nil
    }

    /// Whether `Platform.lastError` says there is no such file (or a path component is not a
    /// folder).
    public static var lastErrorIsNoSuchFile: Bool { errno == ENOENT || errno == ENOTDIR }

    /// What `lock` could do.
    public enum LockResult: Equatable {
        /// Taken.
        case locked
        /// Another open file holds a conflicting lock (or a signal came first).
        case heldElsewhere
        /// Locks failed for another reason: the system's.
        case failed(String)
    }

    /// Takes an advisory lock (`flock`) on the open file without waiting: `exclusive`, else
    /// shared.
    public static func lock(_ descriptor: Int32, exclusive: Bool) -> LockResult {
        if flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 { return .locked }
        let error = errno
        return error == EWOULDBLOCK || error == EINTR ? .heldElsewhere : .failed(Platform.describe(errno: error))
    }

    /// Lets go of the open file's lock.
    public static func unlock(_ descriptor: Int32) {
        _ = flock(descriptor, LOCK_UN)
    }

    /// Makes the descriptor close on exec.
    public static func closeOnExec(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }

    /// A copy of the descriptor numbered `lowest` or above, closing on exec; nil on an error.
    public static func duplicate(_ descriptor: Int32, atLeast lowest: Int32) -> Int32? {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, lowest)
        return copy >= 0 ? copy : nil
    }

    /// The file's size, where an appending descriptor writes next; -1 on an error.
    public static func endOffset(_ descriptor: Int32) -> Int64 {
        Int64(lseek(descriptor, 0, SEEK_END))
    }

    /// Up to `limit` bytes from the start of the open file, whatever its offset (`pread`).
    public static func readFromStart(_ descriptor: Int32, limit: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while bytes.count < limit {
            let count = pread(descriptor, &buffer, buffer.count, off_t(bytes.count))
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
        return bytes
    }

    /// Reads what is there into `buffer`, retrying after signals: the count read, 0 at the end,
    /// -1 on an error.
    public static func readSome(_ descriptor: Int32, into buffer: inout [UInt8]) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { readFile(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            return count
        }
    }

    /// Makes the open file hold exactly `bytes`, written in place from its start (a lock on
    /// the file stays, where a new file renamed over it would have none); false on an error.
    public static func rewrite(_ descriptor: Int32, with bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + offset, $0.count - offset, off_t(offset)) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return ftruncate(descriptor, off_t(bytes.count)) == 0
    }
}

extension FileSystem {
    /// Removes the file at `path` (`unlink`); whether it was removed.
    @discardableResult
    public static func remove(_ path: String) -> Bool {
        unlink(path) == 0
    }
}

extension Socket {
    /// Makes reads from `socket` give up after `milliseconds` (`SO_RCVTIMEO`).
    public static func setReceiveTimeout(_ socket: Int32, milliseconds: Int32) {
        var timeout = timeval(tv_sec: Int(milliseconds / 1000), tv_usec: Int(milliseconds % 1000) * 1000)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
}

// The C calls under names of their own: inside `FileDescriptor`, `open` names its method.
private func openFile(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}

private func readFile(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
