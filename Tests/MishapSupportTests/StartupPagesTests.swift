import Foundation
@testable import MishapSupport
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `StartupPages` gives back clean pages of read-only file mappings, and nothing a process
/// wrote: checked on mappings this test makes of a file of its own.
@Suite(.serialized) struct StartupPagesTests {
    private static let pageCount = 16

    /// A file of `pageCount` pages, each filled with its own index.
    private static func makeFile() throws -> (path: String, size: Int) {
        let size = pageCount * Int(getpagesize())
        let path = NSTemporaryDirectory() + "mishap-startup-pages-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 / Int(getpagesize())) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, size)
    }

    /// Maps the file privately with `protection`, touches every page, and returns the mapping.
    private static func map(_ path: String, size: Int, protection: Int32) throws -> UnsafeMutableRawPointer {
        let descriptor = open(path, O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let address = mmap(nil, size, protection, MAP_PRIVATE, descriptor, 0)
        try #require(address != MAP_FAILED)
        var sum = 0
        for page in 0..<pageCount { sum &+= Int(address!.load(fromByteOffset: page * Int(getpagesize()), as: UInt8.self)) }
        #expect(sum == (0..<pageCount).reduce(0, +))
        return address!
    }

    /// The permissions, resident KiB and private (anonymous) KiB of the mapping at `address`,
    /// from `/proc/self/smaps`.
    private static func mapping(at address: UnsafeMutableRawPointer) -> (permissions: String, residentKiB: Int, anonymousKiB: Int)? {
        let lines = (FileSystem.readText("/proc/self/smaps") ?? "").split(separator: "\n")
        let start = String(UInt(bitPattern: address), radix: 16) + "-"
        guard let header = lines.firstIndex(where: { $0.hasPrefix(start) }) else { return nil }
        var found = (permissions: String(lines[header].split(separator: " ")[1]), residentKiB: -1, anonymousKiB: -1)
        for line in lines[(header + 1)...] {
            let fields = line.split(separator: " ")
            guard let name = fields.first, name.hasSuffix(":") else { break }
            if name == "Rss:" { found.residentKiB = Int(fields[1]) ?? -1 }
            if name == "Anonymous:" { found.anonymousKiB = Int(fields[1]) ?? -1 }
        }
        return found
    }

    @Test func aCleanReadOnlyFileMappingIsGivenBackAndReadsTheSameAfter() throws {
        let (path, size) = try Self.makeFile()
        defer { unlink(path) }
        let address = try Self.map(path, size: size, protection: PROT_READ)
        defer { munmap(address, size) }
        let before = try #require(Self.mapping(at: address))
        #expect(before.permissions == "r--p" && before.anonymousKiB == 0 && before.residentKiB == size / 1024, "\(before)")

        #expect(StartupPages.release() >= size / 1024)
        #expect(Self.mapping(at: address)?.residentKiB == 0)
        // Read again: each page faults back in with the file's bytes.
        for page in 0..<Self.pageCount {
            #expect(address.load(fromByteOffset: page * Int(getpagesize()) + 7, as: UInt8.self) == UInt8(page))
        }
        #expect(Self.mapping(at: address)?.residentKiB == size / 1024)
    }

    /// A private mapping written and then made read-only (as the loader does with a library's
    /// relocated data) holds pages of the process's own: they are kept as written.
    @Test func writtenPagesOfAReadOnlyMappingAreKept() throws {
        let (path, size) = try Self.makeFile()
        defer { unlink(path) }
        let address = try Self.map(path, size: size, protection: PROT_READ | PROT_WRITE)
        defer { munmap(address, size) }
        address.storeBytes(of: 0xAB, toByteOffset: 3 * Int(getpagesize()), as: UInt8.self)
        #expect(mprotect(address, size, PROT_READ) == 0)
        let before = try #require(Self.mapping(at: address))
        #expect(before.permissions == "r--p" && before.anonymousKiB > 0, "\(before)")

        StartupPages.release()
        #expect(address.load(fromByteOffset: 3 * Int(getpagesize()), as: UInt8.self) == 0xAB)
        #expect(Self.mapping(at: address)?.residentKiB == size / 1024)
    }

    @Test func readOnlyFileMappingsAreReadFromMaps() {
        let text = """
        00400000-00c00000 r-xp 00000000 08:01 1234                       /usr/bin/mishap server
        00c00000-00d00000 rw-p 00800000 08:01 1234                       /usr/bin/mishap server
        7f00-7f10 r--p 00001000 08:01 99 /lib/libx.so
        7f10-7f20 rw-p 00000000 00:00 0
        7f20-7f30 r--p 00000000 00:00 0                                  [vvar]
        7f30-7f40 r--s 00000000 00:00 0                                  /dev/shm/x
        7f40-7f50 ---p 00000000 08:01 99 /lib/libx.so
        zz-7f60 r--p 00000000 08:01 99 /lib/liby.so
        7f70-7f60 r--p 00000000 08:01 99 /lib/liby.so
        """
        let mappings = StartupPages.readOnlyFileMappings(Array(text.utf8))
        #expect(mappings == [StartupPages.Mapping(start: 0x400000, end: 0xc00000), StartupPages.Mapping(start: 0x7f00, end: 0x7f10)])
    }
}
