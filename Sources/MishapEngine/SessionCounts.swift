/// Per-session counts in two generations: a session is looked up in the current one, then the
/// previous; when the current one holds `limit / 2` sessions it becomes the previous one and the
/// old previous is dropped. So at most `limit` sessions are kept, the least recently seen go
/// first, and each request costs O(1).
struct SessionCounts {
    private var current: [String: UInt] = [:]
    private var previous: [String: UInt] = [:]

    var count: Int { current.count + previous.count }

    mutating func take(_ key: String, limit: Int) -> UInt {
        if let index = current.index(forKey: key) {
            let value = current.values[index]
            current.values[index] = value &+ 1
            return value
        }
        let value = previous.removeValue(forKey: key) ?? 0
        if current.count >= max(1, limit / 2) {
            previous = current
            current = [:]
        }
        current[key] = value &+ 1
        return value
    }

    /// The session's count without taking a position (0 for a session not kept).
    func peek(_ key: String) -> UInt {
        current[key] ?? previous[key] ?? 0
    }

    mutating func remove(_ key: String) {
        current.removeValue(forKey: key)
        previous.removeValue(forKey: key)
    }
}

/// What a session is known by: its value, or for a long one (over 128 bytes) its first 64 bytes
/// and a 64-bit hash of the whole, so a client sending huge session values cannot make each
/// remembered session cost kilobytes.
enum SessionKey {
    static let longest = 128

    static func of(_ session: String) -> String {
        let utf8 = session.utf8
        guard utf8.count > longest else { return session }
        // FNV-1a: deterministic across runs, unlike Hasher, so resets find the same key.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let head = String(decoding: utf8.prefix(64), as: UTF8.self)
        return head + "#" + String(hash, radix: 16) + "/" + String(utf8.count)
    }
}
