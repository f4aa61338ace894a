/// Values kept per session in two generations: a session is looked up in the current one, then
/// the previous; when the current one is full (`SessionKeyBudget`: `limit / 2` sessions, or their
/// values' bytes) it becomes the previous one and the old previous is dropped. So at most
/// `limit` sessions are kept, the least recently seen go first, and each lookup costs O(1). A
/// session is kept by its whole value. (Cycle counts keep their own copy of this scheme, for
/// plain counts.)
struct SessionTable<Value> {
    private var current: [String: Value] = [:]
    private var previous: [String: Value] = [:]
    private var budget = SessionKeyBudget()

    var count: Int { current.count + previous.count }

    /// The session's value, made by `make` when the session is new (or was forgotten).
    mutating func value(for key: String, limit: Int, make: () -> Value) -> Value {
        if let value = current[key] { return value }
        let value = previous.removeValue(forKey: key) ?? make()
        if budget.isFull(adding: key, count: current.count, limit: limit) {
            previous = current
            current = [:]
            budget.startGeneration()
        }
        current[key] = value
        budget.add(key)
        return value
    }

    /// The session's value if it is kept, without making it more recent.
    func peek(_ key: String) -> Value? {
        current[key] ?? previous[key]
    }

    mutating func remove(_ key: String) {
        current.removeValue(forKey: key)
        previous.removeValue(forKey: key)
    }

    /// Every session kept and its value.
    var all: [(key: String, value: Value)] {
        previous.map { ($0.key, $0.value) } + current.map { ($0.key, $0.value) }
    }

    /// The same sessions, each value changed by `transform`, in the same generations.
    func mapValues<Other>(_ transform: (Value) -> Other) -> SessionTable<Other> {
        var table = SessionTable<Other>()
        table.current = current.mapValues(transform)
        table.previous = previous.mapValues(transform)
        table.budget = budget
        return table
    }
}

extension SessionTable: Sendable where Value: Sendable {}
