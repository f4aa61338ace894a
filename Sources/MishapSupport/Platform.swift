// The C library, under the name each platform gives it. Every other module imports
// MishapSupport instead of Glibc or Darwin, so this is the one place that names them.
#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Darwin)
@_exported import Darwin
#endif

/// The platform-specific facts the rest of Mishap asks about.
public enum Platform {
    /// The processors online (at least 1).
    public static var processorCount: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// The text of an `errno` value.
    public static func describe(errno code: Int32) -> String {
        String(cString: strerror(code))
    }
}
