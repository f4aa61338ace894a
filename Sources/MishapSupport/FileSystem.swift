#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file's permission bits (`mode_t`), for the modules that do not import the C library.
public typealias FileMode = mode_t

/// Files and folders through POSIX calls (no Foundation): folder listings, links resolved,
/// small files read, files replaced whole.
public enum FileSystem {
    /// A folder's entries, not `.` and `..`, with whether each is a folder (links followed);
    /// empty when the folder cannot be read.
    public static func entries(of folder: String) -> [(name: String, isFolder: Bool)] {
        guard let stream = opendir(folder) else { return [] }
        defer { closedir(stream) }
        var result: [(name: String, isFolder: Bool)] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            result.append((name, isDirectory(folder + "/" + name)))
        }
        return result
    }

    /// Whether `path` is a folder (a link to one included).
    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The path with every link and `..` resolved; nil when it does not exist.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The absolute form of a path (relative ones are taken from the current folder).
    public static func absolutePath(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let folder = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return folder + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
    }

    /// Why `readRegularFile` read nothing.
    public enum RegularFileProblem: Error, Equatable {
        /// It cannot be opened, looked at or read: the system's reason.
        case unreadable(String)
        /// It is not a regular file (a folder, a FIFO, a device).
        case notRegular
        /// It has more than the limit's bytes: how many it has (or had read when it grew).
        case tooLarge(Int)
    }

    /// The bytes of a regular file of at most `limit` bytes. It is opened without blocking, so
    /// a FIFO named like the file cannot stall the caller, and read only when it is a regular
    /// file within the limit.
    public static func readRegularFile(_ path: String, limit: Int) -> Result<[UInt8], RegularFileProblem> {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(.unreadable(Platform.describe(errno: errno))) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .failure(.unreadable(Platform.describe(errno: errno))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .failure(.notRegular) }
        guard Int(info.st_size) <= limit else { return .failure(.tooLarge(Int(info.st_size))) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        // Left uninitialized: an array of 64 KiB of zeros was most of reading a small file.
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let count = read(descriptor, chunk.baseAddress, chunk.count)
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.unreadable(Platform.describe(errno: errno)))
            }
            if count == 0 { break }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
            // The file grew while being read.
            guard bytes.count <= limit else { return .failure(.tooLarge(bytes.count)) }
        }
        return .success(bytes)
    }

    /// What `stat` says of a file (links followed): its size, modification time and inode.
    public struct Status: Equatable, Sendable {
        public var size: Int
        public var modifiedSeconds: Int
        public var modifiedNanoseconds: Int
        public var inode: Int
    }

    /// The status of the file at `path`; nil when it cannot be looked at.
    public static func status(_ path: String) -> Status? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Status(size: Int(info.st_size), modifiedSeconds: Int(info.st_mtim.tv_sec),
                      modifiedNanoseconds: Int(info.st_mtim.tv_nsec), inode: Int(info.st_ino))
    }

    /// A small file's text (invalid UTF-8 replaced), or nil when it cannot be read.
    public static func readText(_ path: String) -> String? {
        readBytes(path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A small file's bytes, read to the end (files in `/proc` report no size), or nil when it
    /// cannot be opened or read.
    public static func readBytes(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return nil }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
        }
    }

    /// Creates a folder and the folders above it that are missing, new ones with `mode`; nil
    /// when it exists or was made, else the reason.
    public static func makeFolders(_ path: String, mode: mode_t = 0o755) -> String? {
        if isDirectory(path) { return nil }
        let parent = String(path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropLast()
            .map { String(decoding: $0, as: UTF8.self) }.joined(separator: "/"))
        if !parent.isEmpty, let problem = makeFolders(parent, mode: mode) { return problem }
        if mkdir(path, mode) != 0 && errno != EEXIST { return "cannot create \(path): \(Platform.describe(errno: errno))" }
        return isDirectory(path) ? nil : "\(path) is not a folder"
    }

    /// Writes a new file with `mode` (0600 for a private key: set when it is created, so it is
    /// never readable by others, even for a moment); fails when it exists. Nil when written,
    /// else the reason.
    public static func createFile(_ path: String, text: String, mode: mode_t) -> String? {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { return "cannot create \(path): \(Platform.describe(errno: errno))" }
        let written = FileDescriptor.writeAll(descriptor, text) && fchmod(descriptor, mode) == 0
        close(descriptor)
        if !written {
            unlink(path)
            return "cannot write \(path): \(Platform.describe(errno: errno))"
        }
        return nil
    }

    /// The permission bits of a file, or nil when it cannot be examined.
    public static func permissions(_ path: String) -> mode_t? {
        var information = stat()
        guard stat(path, &information) == 0 else { return nil }
        return information.st_mode & 0o777
    }

    /// Replaces a file's contents through a temporary file and a rename, so readers never see
    /// half of it; false on an error.
    public static func replaceContents(of path: String, with text: String) -> Bool {
        replaceContents(of: path, with: Array(text.utf8))
    }

    /// The same with bytes, written as they are. The temporary file is always a new one, made
    /// with `O_EXCL | O_NOFOLLOW` under a name no one can guess beforehand (the pid and 64
    /// random bits), so a file or a symbolic link someone planted in the folder (a shared one,
    /// such as `/tmp/recording`) is never written through; the rename replaces a link at
    /// `path` itself, never what it points to. False on an error, with `errno` set.
    public static func replaceContents(of path: String, with bytes: [UInt8]) -> Bool {
        // A name taken already (by chance, or planted) is passed over for another.
        for _ in 0..<8 {
            let temporary = path + ".tmp\(getpid()).\(String(UInt64.random(in: .min ... .max), radix: 16))"
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if descriptor < 0 {
                if errno == EEXIST { continue }
                return false
            }
            let written = FileDescriptor.writeAll(descriptor, bytes)
            let failure = errno
            close(descriptor)
            guard written, rename(temporary, path) == 0 else {
                let reason = written ? errno : failure
                unlink(temporary)
                errno = reason
                return false
            }
            return true
        }
        errno = EEXIST
        return false
    }

    /// Whether `path` is a symbolic link itself (not followed).
    public static func isSymbolicLink(_ path: String) -> Bool {
        var information = stat()
        return lstat(path, &information) == 0 && information.st_mode & S_IFMT == S_IFLNK
    }
}

/// Descriptors: whole writes, pipes, and what a spawned program inherits.
public enum FileDescriptor {
    /// Writes all of `text`, retrying after signals; false on an error.
    public static func writeAll(_ descriptor: Int32, _ text: String) -> Bool {
        writeAll(descriptor, Array(text.utf8))
    }

    /// Writes all of `bytes`, retrying after signals; false on an error.
    public static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// A pipe whose ends close on exec (and, if asked, never block); nil on an error.
    public static func makePipe(nonBlocking: Bool = false) -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        }
        return (fds[0], fds[1])
    }

    /// Marks every open descriptor above standard error close-on-exec, so a program started
    /// next gets only the descriptors its spawn actions give it. Reads the open ones from
    /// `/proc/self/fd` on Linux; elsewhere (or without /proc) tries every possible descriptor.
    public static func markInheritedCloseOnExec() {
        var descriptors: [Int32] = []
        #if os(Linux)
        for entry in FileSystem.entries(of: "/proc/self/fd") {
            if let descriptor = Int32(entry.name), descriptor > 2 { descriptors.append(descriptor) }
        }
        #endif
        if descriptors.isEmpty {
            let highest = min(Int32(clamping: sysconf(Int32(_SC_OPEN_MAX))), 65_536)
            if highest > 3 { descriptors = Array(3..<highest) }
        }
        for descriptor in descriptors {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }
}
