/// Per-session counts in two generations: a session is looked up in the current one, then the
/// previous; when the current one holds `limit / 2` sessions, or their values take more than
/// `SessionKeyBudget` allows, it becomes the previous one and the old previous is dropped. So at
/// most `limit` sessions are kept, the least recently seen go first, memory is bounded however
/// long the values clients send, and each request costs O(1). A session is kept by its whole
/// value: two different sessions never share a count.
struct SessionCounts {
    private var current: [String: UInt] = [:]
    private var previous: [String: UInt] = [:]
    private var budget = SessionKeyBudget()

    var count: Int { current.count + previous.count }

    mutating func take(_ key: String, limit: Int) -> UInt {
        if let index = current.index(forKey: key) {
            let value = current.values[index]
            current.values[index] = value &+ 1
            return value
        }
        let value = previous.removeValue(forKey: key) ?? 0
        if budget.isFull(adding: key, count: current.count, limit: limit) {
            previous = current
            current = [:]
            budget.startGeneration()
        }
        current[key] = value &+ 1
        budget.add(key)
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

/// When a generation of session values is full: at `limit / 2` sessions, or when their values
/// take more than `bytesPerSession` each on average. Sessions are kept by their whole value (a
/// short hash of a long one could be matched by another session); long values only make the
/// generations turn sooner.
struct SessionKeyBudget: Sendable {
    /// The bytes of value a session may take on average: a UUID and a test name fit.
    static let bytesPerSession = 128

    /// The bytes of the current generation's values.
    private var bytes = 0

    /// Whether the current generation, holding `count` sessions, has no room for `key`.
    func isFull(adding key: String, count: Int, limit: Int) -> Bool {
        let sessions = max(1, limit / 2)
        return count >= sessions || (count > 0 && bytes + key.utf8.count > sessions * Self.bytesPerSession)
    }

    mutating func add(_ key: String) {
        bytes += key.utf8.count
    }

    mutating func startGeneration() {
        bytes = 0
    }
}
