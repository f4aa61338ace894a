import MishapSupport
import Synchronization

/// Rules added while the server runs (`POST /__mishap/rules`, `mishap force`), tried before the
/// scenario files' rules: for every request or for one session, for a number of answers or a
/// while. They outlive reloads of the files (the service compiles them again), and they are
/// bounded: past the limits an addition is refused.
public final class RuntimeRules: Sendable {
    /// One addition: its rules (or the file rule it forces), who it answers and for how long.
    public final class Entry: Sendable {
        public enum Kind: Sendable {
            /// Endpoints with their rules, compiled from scenario text.
            case rules([Endpoint])
            /// The named rule of a scenario file's endpoint (`GET /login`), as `X-Mishap-Rule`
            /// would force it.
            case force(endpoint: String, rule: String)
        }

        /// `r1`, `r2`, ...: never reused while the server runs.
        public let id: String
        /// The session it answers; nil for every request.
        public let session: String?
        public let kind: Kind
        /// How many answers it gives before it disappears; nil for no limit.
        public let times: Int?
        /// When it disappears, in `EngineOptions.clock` milliseconds; nil for never.
        public let expiresAt: Int64?
        /// When it was added, in milliseconds since 1970.
        public let addedAt: Int64
        /// The scenario text it was compiled from (`.rules`), kept to compile it again on reload.
        public let source: String?
        private let used: Atomic<Int>

        public init(id: String, session: String?, kind: Kind, times: Int?, expiresAt: Int64?, addedAt: Int64,
                    source: String?, used: Int = 0) {
            self.id = id
            self.session = session
            self.kind = kind
            self.times = times
            self.expiresAt = expiresAt
            self.addedAt = addedAt
            self.source = source
            self.used = Atomic(used)
        }

        /// The same addition with other compiled rules (after a reload), its answers and expiry kept.
        public func replacing(_ kind: Kind) -> Entry {
            Entry(id: id, session: session, kind: kind, times: times, expiresAt: expiresAt, addedAt: addedAt, source: source,
                  used: used.load(ordering: .relaxed))
        }

        /// How many rules it counts for against the limits.
        public var ruleCount: Int {
            switch kind {
            case .rules(let endpoints): return max(1, endpoints.reduce(0) { $0 + $1.rules.count })
            case .force: return 1
            }
        }

        /// The answers it may still give; nil for no limit.
        public var remaining: Int? {
            times.map { max(0, $0 - used.load(ordering: .relaxed)) }
        }

        /// The endpoints it answers, as written (`GET /login`).
        public var endpointNames: [String] {
            switch kind {
            case .rules(let endpoints): return endpoints.map(\.name)
            case .force(let endpoint, _): return [endpoint]
            }
        }

        /// Takes one of its answers: false when they are all taken (so of many requests at once,
        /// exactly `times` are answered).
        func take() -> Bool {
            guard let times else { return true }
            var current = used.load(ordering: .relaxed)
            while current < times {
                let (exchanged, original) = used.compareExchange(expected: current, desired: current + 1, ordering: .relaxed)
                if exchanged { return true }
                current = original
            }
            return false
        }

        /// Gives back an answer taken for a request its rules passed on.
        func giveBack() {
            if times != nil { used.subtract(1, ordering: .relaxed) }
        }

        func isLive(now: Int64) -> Bool {
            (expiresAt.map { now < $0 } ?? true) && remaining != 0
        }
    }

    /// Why an addition was refused: a limit of rules in all or per session.
    public struct LimitError: Error, Sendable {
        public let reason: String
    }

    private let entries = Mutex<[Entry]>([])
    private let liveCount = Atomic<Int>(0)
    private let nextID = Atomic<Int>(1)

    public init() {}

    /// Whether there are none (a load, no lock: the common case costs nothing).
    public var isEmpty: Bool { liveCount.load(ordering: .relaxed) == 0 }

    /// Adds an entry built by `make` with the next id, unless the rules kept (in all, or for its
    /// session) would go past the limits.
    public func add(session: String?, ruleCount: Int, maxRules: Int, maxRulesPerSession: Int, now: Int64,
                    _ make: (String) -> Entry) -> Result<Entry, LimitError> {
        entries.withLock { entries in
            entries.removeAll { !$0.isLive(now: now) }
            let total = entries.reduce(0) { $0 + $1.ruleCount }
            let ofSession = entries.filter { $0.session == session }.reduce(0) { $0 + $1.ruleCount }
            if total + ruleCount > maxRules {
                liveCount.store(entries.count, ordering: .relaxed)
                return .failure(LimitError(reason: "the server keeps at most \(maxRules) rules added at runtime, and has \(total) (--max-runtime-rules); delete some (DELETE /__mishap/rules/ID) or reset"))
            }
            if ofSession + ruleCount > maxRulesPerSession {
                liveCount.store(entries.count, ordering: .relaxed)
                let whose = session.map { "session \($0)" } ?? "requests without a session"
                return .failure(LimitError(reason: "\(whose) may have at most \(maxRulesPerSession) rules added at runtime, and has \(ofSession) (--max-runtime-rules-per-session)"))
            }
            let entry = make("r\(nextID.wrappingAdd(1, ordering: .relaxed).oldValue)")
            entries.append(entry)
            liveCount.store(entries.count, ordering: .relaxed)
            return .success(entry)
        }
    }

    /// The entries a request of `session` tries, in order: the session's own, newest first, then
    /// those for every request, newest first. Used-up and expired ones are dropped here.
    func candidates(session: String?, now: Int64) -> [Entry] {
        entries.withLock { entries in
            if entries.contains(where: { !$0.isLive(now: now) }) {
                entries.removeAll { !$0.isLive(now: now) }
                liveCount.store(entries.count, ordering: .relaxed)
            }
            var chosen: [Entry] = []
            if let session {
                for entry in entries.reversed() where entry.session == session { chosen.append(entry) }
            }
            for entry in entries.reversed() where entry.session == nil { chosen.append(entry) }
            return chosen
        }
    }

    /// The entries kept, oldest first: all, or those of one session (`.some(nil)`: those for
    /// every request).
    public func list(session: String?? = .none, now: Int64) -> [Entry] {
        entries.withLock { entries in
            entries.removeAll { !$0.isLive(now: now) }
            liveCount.store(entries.count, ordering: .relaxed)
            guard case .some(let session) = session else { return entries }
            return entries.filter { $0.session == session }
        }
    }

    /// Removes the entry `id`; false when there is none.
    public func remove(id: String) -> Bool {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.id == id }) else { return false }
            entries.remove(at: index)
            liveCount.store(entries.count, ordering: .relaxed)
            return true
        }
    }

    /// Removes every entry, or a session's.
    public func removeAll(session: String? = nil) {
        entries.withLock { entries in
            if let session { entries.removeAll { $0.session == session } } else { entries.removeAll() }
            liveCount.store(entries.count, ordering: .relaxed)
        }
    }

    /// Replaces each entry by `transform`'s result, dropping those it returns nil for (after a
    /// reload, rules compiled again against the new scenarios).
    public func replaceAll(_ transform: (Entry) -> Entry?) {
        entries.withLock { entries in
            entries = entries.compactMap(transform)
            liveCount.store(entries.count, ordering: .relaxed)
        }
    }
}
