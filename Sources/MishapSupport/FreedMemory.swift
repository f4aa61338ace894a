#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Memory the C allocator holds after it was freed.
public enum FreedMemory {
    /// glibc's `malloc_trim`, which Swift's Glibc module does not declare (it is in
    /// `<malloc.h>`): looked up once by name; nil on other C libraries.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
        return nil
        #endif
    }()

    /// Hands memory freed but kept by the allocator back to the system, where it can: glibc
    /// keeps freed blocks in its arenas (one per thread that allocated), so after a large rule
    /// set is replaced, the old set's pages would otherwise stay resident. A no-op elsewhere.
    public static func returnToSystem() {
        _ = mallocTrim?(0)
    }
}
