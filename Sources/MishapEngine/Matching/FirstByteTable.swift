/// The conditions of a `tests` run worth testing for a value, found by the value's first byte.
///
/// A `prefix` condition with an ASCII prefix cannot hold for a value that starts with another
/// ASCII byte (`ASCIIAffix.hasPrefix` answers no at the first differing byte, and no other
/// spelling of an ASCII character is ASCII). So for a run such as the login catalogue's thirty
/// `email: { prefix: ... }` rules, a value starting `j` is tested only against the prefixes that
/// start with `j`, and against the run's other conditions (a suffix, a length, a non-ASCII
/// prefix), which are tested whatever the value: the offsets stay in order, so the first match
/// still wins.
struct FirstByteTable: Sendable {
    /// For each ASCII byte, the offsets in the run of the conditions a value starting with it
    /// may pass, in order. Bytes no prefix starts with share one array (`others`).
    private let offsetsByByte: [[Int]]
    /// The offsets of the conditions that are not ASCII prefixes: all a value can pass when it
    /// is absent, empty, or starts with a byte no prefix starts with.
    private let others: [Int]
    /// How many conditions the run has: a value starting beyond ASCII is tested against all.
    private let count: Int

    /// A table for `conditions`, or nil when fewer than `minimumPrefixes` of them are ASCII
    /// prefixes (testing them one by one then costs about what the table saves).
    init?(_ conditions: [Condition], minimumPrefixes: Int = RuleIndex.minimumLookupRun) {
        var firstBytes: [UInt8?] = []
        for condition in conditions {
            if case .prefix(let prefix) = condition, let first = prefix.utf8.first, prefix.utf8.allSatisfy({ $0 < 0x80 }) {
                firstBytes.append(first)
            } else {
                firstBytes.append(nil)
            }
        }
        guard firstBytes.count(where: { $0 != nil }) >= minimumPrefixes else { return nil }
        let others = firstBytes.indices.filter { firstBytes[$0] == nil }
        var offsetsByByte = [[Int]](repeating: others, count: 0x80)
        for byte in Set(firstBytes.compactMap { $0 }) {
            offsetsByByte[Int(byte)] = firstBytes.indices.filter { firstBytes[$0] == nil || firstBytes[$0] == byte }
        }
        self.offsetsByByte = offsetsByByte
        self.others = others
        self.count = conditions.count
    }

    /// Calls `body` with the offsets of the conditions worth testing for `value`, in order,
    /// until it returns a result; nil when it never does. A value starting with a byte beyond
    /// ASCII gets every offset.
    @inline(__always)
    func forEachCandidate<Result>(for value: String?, _ body: (Int) -> Result?) -> Result? {
        let first = value?.utf8.first
        if let first, first >= 0x80 {
            for offset in 0..<count { if let result = body(offset) { return result } }
            return nil
        }
        for offset in first.map({ offsetsByByte[Int($0)] }) ?? others {
            if let result = body(offset) { return result }
        }
        return nil
    }
}
