#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension String {
    /// Whether the string's UTF-8 bytes begin with `prefix`'s: a byte comparison, unlike
    /// `hasPrefix` (which compares characters), and without the generic sequence walk of
    /// `utf8.starts(with:)`, for the checks made on every request's path.
    public func hasUTF8Prefix(_ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard utf8.count >= count else { return false }
        if let equal = utf8.withContiguousStorageIfAvailable({ memcmp($0.baseAddress!, prefix.utf8Start, count) == 0 }) {
            return equal
        }
        return utf8.starts(with: UnsafeBufferPointer(start: prefix.utf8Start, count: count))
    }
}

extension StringProtocol {
    /// Runs `body` over this string's and `other`'s UTF-8 bytes where they are kept (no copy);
    /// nil when either keeps none contiguous (a bridged string: native strings, and substrings
    /// of them, always do). For the byte comparisons made on every request's path, which
    /// stepping through `utf8` views makes about 100 instructions a byte.
    @inlinable @inline(__always)
    public func withUTF8Bytes<Other: StringProtocol, Result>(
        and other: Other, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result? {
        let result = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in body(mine, theirs) }
        }
        guard let result, let result else { return nil }
        return result
    }
}

extension String {
    /// The string of `bytes` when they are valid UTF-8, nil otherwise: `String(validating:as:)`
    /// with a fast path for ASCII. The standard library's validating initializer is generic and
    /// reaches this code unspecialized, about 900 instructions a call in metadata lookups alone;
    /// a JSON body's keys and values are nearly always ASCII, and `String(decoding:as:)` takes
    /// ASCII bytes as they are.
    @inlinable
    public init?<Bytes: Collection>(validUTF8 bytes: Bytes) where Bytes.Element == UInt8 {
        let ascii = bytes.withContiguousStorageIfAvailable { buffer in
            buffer.allSatisfy { $0 < 0x80 }
        } ?? bytes.allSatisfy { $0 < 0x80 }
        if ascii {
            self = String(decoding: bytes, as: UTF8.self)
        } else if let text = String(validating: bytes, as: UTF8.self) {
            self = text
        } else {
            return nil
        }
    }
}
