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
/// `MADV_DONTNEED` on a private file mapping drops the pages from this process's page tables,
/// not from the page cache: a page used again faults back in from the cache (a minor fault, no
/// disk read). A page the process wrote would come back as the file's bytes, though, such as a
/// library's relocated read-only data (RELRO: written at load, then made read-only). So only
/// read-only file mappings are given back, and only those whose every page, as
/// `/proc/self/pagemap` tells, is absent or the file's own (not a private copy, not swapped).
/// `/proc/self/maps` and the page map are read as bytes: about 100 mappings and a few thousand
/// page entries, a fraction of a millisecond.
public enum StartupPages {
    /// A read-only mapping of a file, from `/proc/self/maps`.
    struct Mapping: Equatable {
        var start: UInt
        var end: UInt
    }

    /// Gives back the pages of every read-only file mapping none of whose pages the process
    /// wrote; returns the KiB that were resident in them. 0 where `/proc/self/maps` or
    /// `/proc/self/pagemap` cannot be read (then nothing is given back).
    @discardableResult
    public static func release() -> Int {
        guard let maps = FileSystem.readBytes("/proc/self/maps") else { return 0 }
        let pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)
        guard pagemap >= 0 else { return 0 }
        defer { close(pagemap) }
        let pageSize = UInt(getpagesize())
        var released = 0
        var entries = [UInt64](repeating: 0, count: 4096)
        for mapping in readOnlyFileMappings(maps) {
            guard let present = presentPagesIfAllFromFile(pagemap, mapping, pageSize: pageSize, entries: &entries), present > 0,
                  let address = UnsafeMutableRawPointer(bitPattern: mapping.start) else { continue }
            if madvise(address, Int(mapping.end - mapping.start), MADV_DONTNEED) == 0 { released += present * Int(pageSize) / 1024 }
        }
        return released
    }

    /// The mappings of a `/proc/self/maps` text (`start-end perms offset dev inode path`) that
    /// are private, read-only (`r-xp`, `r--p`) and of a file (a path, not `[vdso]` or nothing).
    static func readOnlyFileMappings(_ maps: [UInt8]) -> [Mapping] {
        var mappings: [Mapping] = []
        var lineStart = 0
        while lineStart < maps.count {
            var lineEnd = lineStart
            while lineEnd < maps.count, maps[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            if let mapping = parseLine(maps[lineStart..<lineEnd]) { mappings.append(mapping) }
            lineStart = lineEnd + 1
        }
        return mappings
    }

    private static func parseLine(_ line: ArraySlice<UInt8>) -> Mapping? {
        var index = line.startIndex
        func hex() -> UInt? {
            var value: UInt = 0, digits = 0
            while index < line.endIndex, let digit = hexDigit(line[index]) {
                value = value << 4 | UInt(digit)
                digits += 1
                index += 1
            }
            return digits > 0 && digits <= 16 ? value : nil
        }
        func skipSpaces() { while index < line.endIndex, line[index] == UInt8(ascii: " ") { index += 1 } }
        func skipField() { while index < line.endIndex, line[index] != UInt8(ascii: " ") { index += 1 } }
        guard let start = hex(), index < line.endIndex, line[index] == UInt8(ascii: "-") else { return nil }
        index += 1
        guard let end = hex(), end > start else { return nil }
        skipSpaces()
        let permissions = index
        skipField()
        guard index - permissions == 4, line[permissions] == UInt8(ascii: "r"), line[permissions + 1] == UInt8(ascii: "-"),
              line[permissions + 3] == UInt8(ascii: "p") else { return nil }
        // Offset, device, inode, then the path.
        for _ in 0..<3 {
            skipSpaces()
            skipField()
        }
        skipSpaces()
        guard index < line.endIndex, line[index] == UInt8(ascii: "/") else { return nil }
        return Mapping(start: start, end: end)
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    /// The number of the mapping's pages present in memory, when each page is either absent or
    /// the file's own; nil when one is a private copy or swapped out, or the page map cannot
    /// be read. `entries` is the buffer the page map is read into, a chunk at a time. Page map
    /// entries (`Documentation/admin-guide/mm/pagemap.rst`): bit 63 present, bit 62 swapped,
    /// bit 61 a page of a file (or shared memory).
    static func presentPagesIfAllFromFile(_ pagemap: Int32, _ mapping: Mapping, pageSize: UInt, entries: inout [UInt64]) -> Int? {
        let present: UInt64 = 1 << 63, swapped: UInt64 = 1 << 62, fromFile: UInt64 = 1 << 61
        var page = mapping.start / pageSize
        let endPage = (mapping.end + pageSize - 1) / pageSize
        var count = 0
        while page < endPage {
            let wanted = Int(min(UInt(entries.count), endPage - page))
            let read = entries.withUnsafeMutableBytes { pread(pagemap, $0.baseAddress, wanted * 8, off_t(page * 8)) }
            guard read == wanted * 8 else { return nil }
            for entry in entries[..<wanted] {
                if entry & swapped != 0 { return nil }
                if entry & present != 0 {
                    guard entry & fromFile != 0 else { return nil }
                    count += 1
                }
            }
            page += UInt(wanted)
        }
        return count
    }
}
