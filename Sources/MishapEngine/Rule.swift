import Synchronization

/// One named rule of an endpoint: when a request matches, what to answer. A class, so the
/// matching loop passes rules around without copying (and retaining) their parts.
public final class Rule: Sendable {
    /// What a rule does once its `when` holds.
    public enum Action: Sendable {
        /// Always the same response.
        case respond(ResponseTemplate)
        /// One step per matching request, in order, then from the start again.
        case cycle([CycleStep], CycleCounter)
    }

    /// A step of a cycle.
    public enum CycleStep: Sendable {
        case respond(ResponseTemplate)
        /// Fall through: the rules after this one answer as if this rule had not matched.
        case pass
    }

    public let name: String
    /// Alternatives: the rule matches when any of them holds.
    public let when: [Predicate]
    public let action: Action
    /// The fraction of matching requests the rule applies to (the others fall through);
    /// nil applies it to all.
    public let chance: Double?
    /// Where the rule was declared (`scenarios/login.yaml:12`), for listings and logs.
    public let source: String?

    public init(name: String, when: [Predicate] = [.always], action: Action, chance: Double? = nil, source: String? = nil) {
        self.name = name
        self.when = when
        self.action = action
        self.chance = chance
        self.source = source
    }

    func matches(_ context: inout MatchContext) -> Bool {
        for predicate in when where predicate.holds(in: &context) { return true }
        return false
    }
}

/// Counts the requests a cycle has seen: one count shared by requests without a session, and
/// one per session. Exact under concurrency: every request takes a distinct position, with no
/// lost or doubled counts.
///
/// Sessions are bounded: past `limit` of them, the ones not seen for longest are forgotten (and
/// start over if they come back). The most recent `limit / 2` are always kept.
public final class CycleCounter: Sendable {
    private let shared = Atomic<UInt>(0)
    private let sessions = Mutex(SessionCounts())

    public init() {}

    /// Takes the next position, in `0..<length`, of the session's count (the shared one without).
    func next(length: Int, session: String?, limit: Int = EngineOptions.defaultMaxSessions) -> Int {
        let taken: UInt
        if let session {
            let key = SessionKey.of(session)
            taken = sessions.withLock { $0.take(key, limit: limit) }
        } else {
            taken = shared.wrappingAdd(1, ordering: .relaxed).oldValue
        }
        return Int(taken % UInt(length))
    }

    /// Starts every count over.
    public func reset() {
        shared.store(0, ordering: .relaxed)
        sessions.withLock { $0 = SessionCounts() }
    }

    /// Starts one session's count over.
    public func reset(session: String) {
        let key = SessionKey.of(session)
        sessions.withLock { $0.remove(key) }
    }

    /// The sessions whose counts are kept now.
    public var sessionCount: Int {
        sessions.withLock { $0.count }
    }
}

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
