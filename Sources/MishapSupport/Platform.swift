// The C library, under the name each platform gives it. Only MishapSupport imports it, each of
// its files that calls it (as here): every other module calls the system through MishapSupport's
// own functions (`Platform`, `Processes`, `FileSystem`, `FileDescriptor`, `Socket`, `Threads`,
// `Signals`...), as swift-nio's NIOPosix does through its `Posix` enum, so this module is the
// one seam between Mishap and the platform.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The platform-specific facts the rest of Mishap asks about.
public enum Platform {
    /// The processors online (at least 1).
    public static var processorCount: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// An environment variable of this process (`getenv`); nil when it is not set.
    public static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// This machine's host name (`gethostname`), when it has one.
    public static func hostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }

    /// The `errno` of the calling thread: why the last system call that failed did.
    public static var lastError: Int32 { errno }

    /// The text of the calling thread's `errno`.
    public static func describeLastError() -> String {
        describe(errno: errno)
    }

    /// The text of an `errno` value.
    public static func describe(errno code: Int32) -> String {
        String(cString: strerror(code))
    }
}
