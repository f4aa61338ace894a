#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `.` and `..` segments of a path, removed as RFC 3986 section 5.2.4 says: the path a
/// request is served as, and the path an upstream is sent, never climb above where they start.
/// A request for `/public/../../admin` is `/admin`, so no rule, session prefix or proxy base
/// path sees a `..` it could be walked out of.
public enum DotSegments {
    /// Whether `path` holds a `.` or `..` segment (`/./`, `/../`, or one at the end). A path
    /// without one, nearly every path, costs one `memchr` for its first dot, and is left as it is.
    public static func occur(in path: String) -> Bool {
        var path = path
        return path.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            return occur(base, count: bytes.count)
        }
    }

    /// `occur(in:)` over a C string: the target libmicrohttpd hands over, checked before a
    /// String is made of it.
    public static func occur(inCString path: UnsafePointer<CChar>) -> Bool {
        let dot = CChar(UInt8(ascii: ".")), slash = CChar(UInt8(ascii: "/"))
        var next = strchr(path, Int32(dot))
        while let found = next {
            let dotAt = UnsafePointer(found)
            // A segment starts after a slash (or at the start of a relative path).
            if dotAt == path || dotAt[-1] == slash {
                let end = dotAt[1] == dot ? dotAt + 2 : dotAt + 1
                if end.pointee == 0 || end.pointee == slash { return true }
            }
            next = strchr(dotAt + 1, Int32(dot))
        }
        return false
    }

    /// `occur(in:)` over `count` bytes at `start`.
    static func occur(_ start: UnsafePointer<UInt8>, count: Int) -> Bool {
        let dot = UInt8(ascii: "."), slash = UInt8(ascii: "/")
        var offset = 0
        while offset < count, let found = memchr(start + offset, Int32(dot), count - offset) {
            let index = UnsafeRawPointer(found) - UnsafeRawPointer(start)
            // A segment starts after a slash (or at the start of a relative path).
            if index == 0 || start[index - 1] == slash {
                var end = index + 1
                if end < count && start[end] == dot { end += 1 }
                if end == count || start[end] == slash { return true }
            }
            offset = index + 1
        }
        return false
    }

    /// `path` without its dot segments: `/a/./b/../c` is `/a/c`, `/a/..` is `/a/`, and a `..`
    /// at the top stays at the top (`/../../x` is `/x`). Empty segments (`//`) are kept, as
    /// RFC 3986 keeps them. A path that does not start with `/` is returned as it is.
    public static func removed(from path: String) -> String {
        guard path.utf8.first == UInt8(ascii: "/"), occur(in: path) else { return path }
        var segments: [Substring] = []
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var endsWithSlash = false
        for (offset, part) in parts.enumerated() {
            let isLast = offset == parts.count - 1
            switch part {
            case ".":
                endsWithSlash = isLast
            case "..":
                if !segments.isEmpty { segments.removeLast() }
                endsWithSlash = isLast
            default:
                segments.append(part)
                endsWithSlash = false
            }
        }
        return "/" + segments.joined(separator: "/") + (endsWithSlash && !segments.isEmpty ? "/" : "")
    }
}
