// Small POSIX helpers the subcommands share: writing and reading files and descriptors, paths,
// descriptor limits and inheritance.

import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Writes a line to standard error.
func printError(_ message: String) {
    _ = writeAll(2, message + "\n")
}

/// Writes all of `text` to a descriptor; false on an error.
func writeAll(_ descriptor: Int32, _ text: String) -> Bool {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 && errno == EINTR { continue }
        if written <= 0 { return false }
        offset += written
    }
    return true
}

/// Replaces a file's contents (through a temporary file and a rename, so readers never see half).
func writeFile(_ path: String, _ text: String) -> Bool {
    let temporary = path + ".tmp\(getpid())"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { return false }
    let written = writeAll(descriptor, text)
    close(descriptor)
    guard written, rename(temporary, path) == 0 else {
        unlink(temporary)
        return false
    }
    return true
}

/// A small file's text, or nil.
func readText(_ path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(descriptor, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        bytes += buffer[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// The absolute form of a path (relative ones are taken from the current folder).
func absolutePath(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return path }
    let folder = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return folder + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
}

/// Marks every open descriptor above standard error close-on-exec, so a program started next
/// gets only the descriptors its spawn actions give it.
func markInheritedDescriptorsCloseOnExec() {
    guard let folder = opendir("/proc/self/fd") else { return }
    var descriptors: [Int32] = []
    while let entry = readdir(folder) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        if let descriptor = Int32(name), descriptor > 2 { descriptors.append(descriptor) }
    }
    closedir(folder)
    for descriptor in descriptors {
        let flags = fcntl(descriptor, F_GETFD)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
    }
}

/// Raises the soft limit on open descriptors toward the hard one so `wanted` connections fit,
/// and returns the connection limit that does fit (with a warning when it is lower).
func raiseDescriptorLimit(for wanted: Int, logger: Logger) -> Int {
    // Besides connections: the listener, epoll and wake-up descriptors per thread, the
    // scenario watcher, logs, and files read on reload.
    let reserve = 64
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return wanted }
    let needed = rlim_t(wanted + reserve)
    if limit.rlim_cur < needed {
        var raised = limit
        raised.rlim_cur = limit.rlim_max == rlim_t.max ? needed : min(needed, limit.rlim_max)
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
    }
    let fitting = limit.rlim_cur == rlim_t.max ? wanted : min(wanted, max(1, Int(clamping: limit.rlim_cur) - reserve))
    if fitting < wanted {
        logger.warning("--connection-limit \(wanted) does not fit the open-file limit (\(limit.rlim_cur)); using \(fitting)")
    }
    return fitting
}

/// Whether a --host value only accepts connections from this machine.
func isLoopback(host: String) -> Bool {
    host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
}
