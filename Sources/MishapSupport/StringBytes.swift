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
