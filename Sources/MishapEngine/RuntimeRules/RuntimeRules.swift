import MishapSupport
import Synchronization

/// Rules added while the server runs (`POST /__mishap/rules`, `mishap force`), tried before the
/// scenario files' rules: for every request or for one session, for a number of answers or a
/// while. They outlive reloads of the files (the service compiles them again for a new state
/// layout), and they are bounded in count and in bytes: past the limits an addition is refused.
///
/// They are indexed by session and by path (`RuntimeRuleScope`), so a request pays for the
/// rules of its own path only, however many other rules there are.
public final class RuntimeRules: Sendable {
    /// One addition: its rules (or the file rule it forces), who it answers and for how long.
    public final class Entry: Sendable {
        public enum Kind: Sendable {
            /// Endpoints with their rules, compiled from scenario text (as first compiled: their
            /// names, rules and paths; `endpoints(forState:)` has those an engine evaluates).
            case rules([Endpoint])
            /// The named rule of a scenario file's endpoint (`GET /login`), as `X-Mishap-Rule`
            /// would force it.
            case force(endpoint: String, rule: String)
        }

        /// Rules compiled against one state store's slots (its `generation`), or, when they read
        /// no state, for any store (a nil generation). Kept while that store is: an engine holds
        /// its store, so every engine still answering finds its own compilation.
        struct Compilation: Sendable {
            let stateGeneration: Int?
            weak var store: StateStore?
            let endpoints: [Endpoint]

            /// Whether an engine no longer answers with its store.
            var isStale: Bool { stateGeneration != nil && store == nil }
        }

        /// `r1`, `r2`, ...: never reused while the server runs.
        public let id: String
        /// The number in `id`: a later addition is tried before an earlier one.
        let number: Int
        /// The session it answers; nil for every request.
        public let session: String?
        public let kind: Kind
        /// How many answers it gives before it disappears; nil for no limit.
        public let times: Int?
        /// When it disappears, in `EngineOptions.clock` milliseconds; nil for never. Brought
        /// closer when its session's clock is moved forward (`RuntimeRules.moveClock`).
        public var expiresAt: Int64? {
            let expiry = expiry.load(ordering: .relaxed)
            return expiry == .max ? nil : expiry
        }
        private let expiry: Atomic<Int64>
        /// When it was added, in milliseconds since 1970.
        public let addedAt: Int64
        /// The scenario text it was compiled from (`.rules`), kept to compile it again on reload.
        public let source: String?
        /// What it holds in memory, counted against the byte budget: its text and the bytes of
        /// its compiled answers.
        public let bytes: Int
        /// The literal paths of its endpoints (an index's keys), and whether any path has parameters.
        let literalPaths: [String]
        let hasPatternPaths: Bool
        private let used = Atomic<Int>(0)
        /// Newest first.
        private let compilations: Mutex<[Compilation]>

        /// An addition numbered `number` (its id is `r` and the number). `.rules` endpoints are
        /// those compiled against `state` (nil when the scenarios declare none).
        public init(number: Int, session: String?, kind: Kind, state: StateStore?, times: Int?, expiresAt: Int64?,
                    addedAt: Int64, source: String?) {
            self.id = "r\(number)"
            self.number = number
            self.session = session
            self.kind = kind
            self.times = times
            self.expiry = Atomic(expiresAt ?? .max)
            self.addedAt = addedAt
            self.source = source
            var literal: [String] = []
            var patterned = false
            func index(_ path: PathPattern) {
                if !path.isLiteral {
                    patterned = true
                } else if !literal.contains(path.description) {
                    literal.append(path.description)
                }
            }
            switch kind {
            case .rules(let endpoints):
                endpoints.forEach { index($0.path) }
                compilations = Mutex([Self.compilation(endpoints, state: state)])
                bytes = (source?.utf8.count ?? 0) + endpoints.reduce(0) { $0 + $1.heldBytes }
            case .force(let endpoint, _):
                let path = endpoint.split(separator: " ", maxSplits: 1).last.map(String.init) ?? endpoint
                index(PathPattern(path) ?? PathPattern("/")!)
                compilations = Mutex([])
                bytes = endpoint.utf8.count
            }
            literalPaths = literal
            hasPatternPaths = patterned
        }

        private static func compilation(_ endpoints: [Endpoint], state: StateStore?) -> Compilation {
            guard let state, endpoints.contains(where: \.usesState) else {
                return Compilation(stateGeneration: nil, store: nil, endpoints: endpoints)
            }
            return Compilation(stateGeneration: state.generation, store: state, endpoints: endpoints)
        }

        /// The endpoints an engine whose state store is of generation `stateGeneration` evaluates:
        /// those compiled against that store's slots (or reading no state); nil when there are
        /// none, for an engine a reload has replaced, or before the reload's compilation.
        func endpoints(forState stateGeneration: Int?) -> [Endpoint]? {
            compilations.withLock { compilations in
                compilations.first { $0.stateGeneration == nil || $0.stateGeneration == stateGeneration }?.endpoints
            }
        }

        /// Whether the rules need compiling again to serve with `state` (a reload's new store):
        /// they read state and were compiled for another store.
        public func needsCompiling(for state: StateStore?) -> Bool {
            guard case .rules = kind else { return false }
            return endpoints(forState: state?.generation) == nil
        }

        /// Adds the rules compiled again for `state`; engines still answering with an earlier
        /// store keep their own compilation, and those of stores no engine holds are dropped.
        public func addCompilation(_ endpoints: [Endpoint], for state: StateStore?) {
            compilations.withLock { compilations in
                compilations.removeAll(where: \.isStale)
                compilations.insert(Self.compilation(endpoints, state: state), at: 0)
            }
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

        /// Brings its expiry `milliseconds` closer (its session's clock moved forward).
        func moveClock(by milliseconds: Int64) {
            let current = expiry.load(ordering: .relaxed)
            if current != .max { expiry.store(current &- milliseconds, ordering: .relaxed) }
        }

        func isLive(now: Int64) -> Bool {
            now < expiry.load(ordering: .relaxed) && remaining != 0
        }
    }

    /// Why an addition was refused: a limit of rules or bytes, in all or per session.
    public struct LimitError: Error, Sendable {
        public let reason: String
    }

    /// The limits an addition is checked against.
    public struct Limits: Sendable {
        public var rules: Int
        public var rulesPerSession: Int
        public var bytes: Int

        public init(rules: Int, rulesPerSession: Int, bytes: Int) {
            self.rules = rules
            self.rulesPerSession = rulesPerSession
            self.bytes = bytes
        }
    }

    private struct Storage: Sendable {
        /// Every entry kept, oldest first.
        var entries: [Entry] = []
        /// The entries for every request, and each session's.
        var everyone = RuntimeRuleScope()
        var sessions: [String: RuntimeRuleScope] = [:]
        var rules = 0
        var bytes = 0

        mutating func insert(_ entry: Entry) {
            entries.append(entry)
            rules += entry.ruleCount
            bytes += entry.bytes
            if let session = entry.session {
                sessions[session, default: RuntimeRuleScope()].insert(entry)
            } else {
                everyone.insert(entry)
            }
        }

        /// Takes out the entries `remove` picks.
        mutating func remove(where remove: (Entry) -> Bool) {
            var kept: [Entry] = []
            kept.reserveCapacity(entries.count)
            for entry in entries {
                guard remove(entry) else { kept.append(entry); continue }
                rules -= entry.ruleCount
                bytes -= entry.bytes
                if let session = entry.session {
                    sessions[session]?.remove(entry)
                    if sessions[session]?.isEmpty == true { sessions[session] = nil }
                } else {
                    everyone.remove(entry)
                }
            }
            entries = kept
        }
    }

    private let storage = Mutex(Storage())
    private let liveCount = Atomic<Int>(0)
    private let nextNumber = Atomic<Int>(1)

    public init() {}

    /// Whether there are none (a load, no lock: the common case costs nothing).
    public var isEmpty: Bool { liveCount.load(ordering: .relaxed) == 0 }

    /// Adds the entry `make` builds with the next number, unless the rules or bytes kept (in
    /// all, or for its session) would go past `limits`. `make` is called under the lock, so
    /// entries are numbered in the order they are added.
    public func add(session: String?, limits: Limits, now: Int64,
                    _ make: (Int) -> Entry) -> Result<Entry, LimitError> {
        storage.withLock { storage in
            storage.remove { !$0.isLive(now: now) }
            defer { liveCount.store(storage.entries.count, ordering: .relaxed) }
            let entry = make(nextNumber.load(ordering: .relaxed))
            let ofSession = session.map { storage.sessions[$0]?.rules ?? 0 } ?? storage.everyone.rules
            if storage.rules + entry.ruleCount > limits.rules {
                return .failure(LimitError(reason: "the server keeps at most \(limits.rules) rules added at runtime, and has \(storage.rules) (--max-runtime-rules); delete some (DELETE /__mishap/rules/ID) or reset"))
            }
            if ofSession + entry.ruleCount > limits.rulesPerSession {
                let whose = session.map { "session \($0)" } ?? "requests without a session"
                return .failure(LimitError(reason: "\(whose) may have at most \(limits.rulesPerSession) rules added at runtime, and has \(ofSession) (--max-runtime-rules-per-session)"))
            }
            if storage.bytes + entry.bytes > limits.bytes {
                return .failure(LimitError(reason: "the rules added at runtime may hold at most \(limits.bytes) bytes in all, and hold \(storage.bytes); these would add \(entry.bytes) (--max-runtime-rule-bytes); delete some (DELETE /__mishap/rules/ID) or reset"))
            }
            nextNumber.wrappingAdd(1, ordering: .relaxed)
            storage.insert(entry)
            return .success(entry)
        }
    }

    /// The entries a request of `session` to `path` tries, in order: the session's own, newest
    /// first, then those for every request, newest first; only those with an endpoint at that
    /// path, or with parameters in a path. Used-up and expired ones are dropped here.
    func candidates(session: String?, path: String, now: Int64) -> [Entry] {
        storage.withLock { storage in
            var chosen: [Entry] = []
            var dead = false
            if let session, let scope = storage.sessions[session] {
                scope.candidates(path: path, now: now, into: &chosen, dead: &dead)
            }
            storage.everyone.candidates(path: path, now: now, into: &chosen, dead: &dead)
            if dead {
                storage.remove { !$0.isLive(now: now) }
                liveCount.store(storage.entries.count, ordering: .relaxed)
            }
            return chosen
        }
    }

    /// The entries kept, oldest first: all, or those of one session (`.some(nil)`: those for
    /// every request).
    public func list(session: String?? = .none, now: Int64) -> [Entry] {
        storage.withLock { storage in
            storage.remove { !$0.isLive(now: now) }
            liveCount.store(storage.entries.count, ordering: .relaxed)
            guard case .some(let session) = session else { return storage.entries }
            return storage.entries.filter { $0.session == session }
        }
    }

    /// Removes the entry `id`; false when there is none.
    public func remove(id: String) -> Bool {
        storage.withLock { storage in
            let before = storage.entries.count
            storage.remove { $0.id == id }
            liveCount.store(storage.entries.count, ordering: .relaxed)
            return storage.entries.count < before
        }
    }

    /// Removes the entries whose ids are in `ids` (after a reload, those that no longer load).
    public func remove(ids: Set<String>) {
        guard !ids.isEmpty else { return }
        storage.withLock { storage in
            storage.remove { ids.contains($0.id) }
            liveCount.store(storage.entries.count, ordering: .relaxed)
        }
    }

    /// Brings the expiries of `session`'s entries `milliseconds` closer, as if that time had
    /// passed for it (`SessionClocks`); those it ends are removed.
    public func moveClock(session: String, by milliseconds: Int64, now: Int64) {
        guard milliseconds > 0 else { return }
        storage.withLock { storage in
            for entry in storage.entries where entry.session == session { entry.moveClock(by: milliseconds) }
            storage.remove { !$0.isLive(now: now) }
            liveCount.store(storage.entries.count, ordering: .relaxed)
        }
    }

    /// Removes every entry, or a session's.
    public func removeAll(session: String? = nil) {
        storage.withLock { storage in
            if let session { storage.remove { $0.session == session } } else { storage = Storage() }
            liveCount.store(storage.entries.count, ordering: .relaxed)
        }
    }
}
