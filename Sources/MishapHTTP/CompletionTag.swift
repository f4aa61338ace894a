/// A plan's completion tag (`ResponsePlan.completionTag`) kept in libmicrohttpd's per-request
/// context pointer, for a request that has no `RequestState` (nearly all, when requests are not
/// logged): no allocation to carry one number to `handleCompleted`. The top bit marks it; it is
/// never set in a user-space address on the 64-bit platforms Mishap runs on, so neither a
/// `RequestState` nor a marker can be taken for a tag.
enum CompletionTag {
    private static let mark: UInt = 1 << (UInt.bitWidth - 1)

    /// The context pointer standing for `tag` (which must be below 2^63, as journal ids are).
    static func pointer(_ tag: UInt64) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(bitPattern: UInt(truncatingIfNeeded: tag) | mark)!
    }

    /// The tag a context pointer stands for, or nil when it is an address.
    static func tag(_ pointer: UnsafeMutableRawPointer) -> UInt64? {
        let bits = UInt(bitPattern: pointer)
        return bits & mark != 0 ? UInt64(bits & ~mark) : nil
    }
}
