#if canImport(Glibc)
import Glibc
#endif

/// Gives back the pages of the executable and its libraries that only starting touched.
///
/// Starting runs code and reads data that serving never touches again: argument parsing, the
/// scenario compiler, and the Swift runtime's scan of every protocol conformance in the binary
/// (its records and the type descriptors they name, spread over the whole file). Measured on
/// the release binary, those pages are about 5.5 MiB of the 6.6 MiB of its code resident after
/// starting; serving a GET, a login and a cycle touches about 1 MiB of it. Clean pages of a file
/// stay in a process's resident set until the kernel needs the memory, so `ps` and `top` would
/// count them for as long as the server runs.
///
/// `MADV_DONTNEED` on a private file mapping that was never written drops the pages from this
/// process's page tables, not from the page cache: a page used again faults back in from the
/// cache (a minor fault, no disk read). Only mappings that are read-only now and hold no page of
/// their own (no `Anonymous` or `Swap` pages in `/proc/self/smaps`) are given back: a page the
/// process wrote, such as a library's relocated read-only data (RELRO, written at load, then
/// made read-only), would come back as the file's unrelocated bytes.
public enum StartupPages {
    /// One mapping of `/proc/self/smaps`.
    struct Mapping: Equatable {
        var start: UInt
        var end: UInt
        var permissions: Substring
        var path: Substring
        var anonymousKiB = 0
        var swapKiB = 0
        var residentKiB = 0

        /// Whether dropping its pages loses nothing: read-only, backed by a file, and none of
        /// its pages written by this process.
        var isCleanFileMapping: Bool {
            (permissions == "r-xp" || permissions == "r--p") && path.hasPrefix("/") && anonymousKiB == 0 && swapKiB == 0
        }
    }

    /// Gives back the pages of every clean read-only file mapping; returns the KiB that were
    /// resident in them. 0 where `/proc/self/smaps` cannot be read.
    @discardableResult
    public static func release() -> Int {
        guard let smaps = FileSystem.readText("/proc/self/smaps") else { return 0 }
        var released = 0
        for mapping in mappings(smaps) where mapping.isCleanFileMapping && mapping.residentKiB > 0 {
            guard let address = UnsafeMutableRawPointer(bitPattern: mapping.start) else { continue }
            if madvise(address, Int(mapping.end - mapping.start), MADV_DONTNEED) == 0 { released += mapping.residentKiB }
        }
        return released
    }

    /// The mappings of an smaps text: a header line (`start-end perms offset dev inode path`)
    /// followed by `Name: value kB` lines.
    static func mappings(_ smaps: String) -> [Mapping] {
        var mappings: [Mapping] = []
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.hasSuffix(":") {
                guard !mappings.isEmpty, fields.count >= 2, let kib = Int(fields[1]) else { continue }
                switch first {
                case "Anonymous:": mappings[mappings.count - 1].anonymousKiB = kib
                case "Swap:": mappings[mappings.count - 1].swapKiB = kib
                case "Rss:": mappings[mappings.count - 1].residentKiB = kib
                default: break
                }
                continue
            }
            let bounds = first.split(separator: "-")
            guard fields.count >= 5, bounds.count == 2, let start = UInt(bounds[0], radix: 16),
                  let end = UInt(bounds[1], radix: 16), end > start else { continue }
            let path = fields.count == 6 ? fields[5].drop { $0 == " " } : ""
            mappings.append(Mapping(start: start, end: end, permissions: fields[1], path: path))
        }
        return mappings
    }
}
