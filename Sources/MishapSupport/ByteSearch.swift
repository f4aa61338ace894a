#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finding a byte in a run of bytes with the C library's `memchr`, which compares many bytes a
/// step: `utf8.contains` walks the view generically, several times slower. Inlinable, as it is
/// on the path of every request line.
public enum ByteSearch {
    /// Whether `bytes` hold `byte`.
    @inlinable
    public static func contains(_ byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
        return memchr(base, Int32(byte), bytes.count) != nil
    }
}
