import MishapEngine
import MishapSupport
import Synchronization

/// What each session's clients did, kept for the verdict (`GET /__mishap/verdict`): every
/// request of a session as a `ClientAttempt`, in arrival order, apart from the journal, whose
/// one ring is shared by every session and lets entries go to make room.
///
/// Bounded: a session keeps its last `attemptsPerSession` attempts and counts those it let go
/// (the verdict then judges nothing rather than judge on part of the evidence); at most
/// `maxSessions` sessions and `maxAttempts` attempts in all are kept, the sessions least
/// recently used going first, and the names of the last sessions that went are remembered (as
/// hashes) so that their verdict says why it has nothing. An attempt holds at most a few
/// hundred bytes (`ClientAttempt.requestTextLimit`).
///
/// A session's history starts at its first eventful answer (`ClientAttempt.isUneventful`: a
/// failure, a slow answer, a refresh): the plain successes before it bear on no check, and cost
/// a request without a session one atomic load, and one with a session a lookup in its shard.
///
/// Sessions are spread over shards by hash, each behind its own lock: requests of different
/// sessions seldom wait for one another.
final class ClientHistory: Sendable {
    let attemptsPerSession: Int
    let maxSessions: Int
    let maxAttempts: Int

    struct Record {
        var attempts: RecentItems<ClientAttempt>
        /// How many attempts the session let go of to keep its last `attemptsPerSession`.
        var dropped = 0
        /// The session's earlier history was let go of to make room for others.
        var evictedBefore = false
    }

    private struct Shard {
        var sessions = InsertionOrderedTable<SessionKey, Record>()
        /// How many attempts the shard's sessions hold.
        var attemptCount = 0
        /// Hashes of the sessions this shard let go of, newest last, bounded.
        var evicted = RecentItems<Int>(capacity: 256)
    }

    /// A session's name, or none for requests without one.
    struct SessionKey: Hashable, Sendable {
        let name: String?
    }

    /// One shard and its lock.
    private final class ShardBox: Sendable {
        let state = Mutex(Shard())
    }

    private let shards: [ShardBox]
    private let sessionsPerShard: Int
    private let attemptsPerShard: Int
    /// The ids of the attempts still going on that the history follows to their end (hangs,
    /// dribbles, delays), with their session; requests pay one atomic load while it is empty.
    private let following = Mutex<[UInt64: (session: SessionKey, started: Int64)]>([:])
    private let followingCount = Atomic<Int>(0)
    /// The ids of the streams of events still going on, with their session: told what they sent
    /// when they are over (after the server is done with their request, so not in `following`).
    private let openStreams = Mutex<[UInt64: SessionKey]>([:])
    /// Whether the requests without a session have a history yet.
    private let sessionlessStarted = Atomic<Bool>(false)
    /// Ids for attempts when the journal keeps none, above any the journal gives.
    private let ownIDs = Atomic<UInt64>(1 << 62)

    /// The default of `attemptsPerSession`: a test's session seldom sends more.
    static let defaultAttemptsPerSession = 500
    /// The default of `maxAttempts`: about 25 MB at the most, a few MB as clients usually send.
    static let defaultMaxAttempts = 100_000

    init(attemptsPerSession: Int = ClientHistory.defaultAttemptsPerSession, maxSessions: Int = 1_000,
         maxAttempts: Int = ClientHistory.defaultMaxAttempts, shardCount: Int = 16) {
        self.attemptsPerSession = max(1, attemptsPerSession)
        self.maxSessions = max(1, maxSessions)
        self.maxAttempts = max(self.attemptsPerSession, maxAttempts)
        let shardCount = max(1, min(shardCount, self.maxSessions))
        sessionsPerShard = max(1, (self.maxSessions + shardCount - 1) / shardCount)
        attemptsPerShard = max(self.attemptsPerSession, self.maxAttempts / shardCount)
        shards = (0..<shardCount).map { _ in ShardBox() }
    }

    private func shard(_ key: SessionKey) -> ShardBox {
        shards[Int(UInt(bitPattern: key.hashValue) % UInt(shards.count))]
    }

    /// An id for an attempt the journal did not number.
    func nextOwnID() -> UInt64 {
        ownIDs.add(1, ordering: .relaxed).newValue
    }

    /// Whether `session` (nil: the requests without one) has a history: its uneventful
    /// answers are kept from then on.
    func hasStarted(session: String?) -> Bool {
        guard let session else { return sessionlessStarted.load(ordering: .relaxed) }
        let key = SessionKey(name: session)
        return shard(key).state.withLock { $0.sessions[key] != nil }
    }

    /// Adds `attempt` to its session's history.
    func record(_ attempt: ClientAttempt, session: String?) {
        let key = SessionKey(name: session)
        if session == nil { sessionlessStarted.store(true, ordering: .relaxed) }
        if attempt.followedToEnd {
            let started = MonotonicClock.nanoseconds()
            following.withLock { open in
                open[attempt.id] = (key, started)
                followingCount.store(open.count, ordering: .relaxed)
            }
        }
        if attempt.eventStream != nil {
            openStreams.withLock { $0[attempt.id] = key }
        }
        shard(key).state.withLock { shard in
            var record: Record
            if let kept = shard.sessions.removeValue(forKey: key) {
                record = kept
            } else {
                record = Record(attempts: RecentItems(capacity: attemptsPerSession))
                record.evictedBefore = shard.evicted.items.contains(key.hashValue)
            }
            if record.attempts.count == attemptsPerSession {
                record.dropped += 1
            } else {
                shard.attemptCount += 1
            }
            record.attempts.append(attempt)
            // Room for it: the sessions least recently used go.
            while shard.sessions.count >= sessionsPerShard || shard.attemptCount > attemptsPerShard,
                  let oldest = shard.sessions.removeOldest() {
                shard.attemptCount -= oldest.value.attempts.count
                shard.evicted.append(oldest.key.hashValue)
                // Its attempts still followed are no longer looked for.
                following.withLock { open in
                    open = open.filter { $0.value.session != oldest.key }
                    followingCount.store(open.count, ordering: .relaxed)
                }
            }
            shard.sessions.append(key, record)
        }
    }

    /// The server is done with the request of attempt `id`: notes how long it lasted and
    /// whether the client left first, when the history follows it.
    func complete(_ id: UInt64, completedNormally: Bool) {
        guard followingCount.load(ordering: .relaxed) > 0 else { return }
        let found = following.withLock { open in
            let found = open.removeValue(forKey: id)
            followingCount.store(open.count, ordering: .relaxed)
            return found
        }
        guard let (key, started) = found else { return }
        let durationMilliseconds = (MonotonicClock.nanoseconds() - started) / 1_000_000
        let closedEarly = !completedNormally
        shard(key).state.withLock { shard in
            guard var record = shard.sessions.removeValue(forKey: key) else { return }
            record.attempts.update { attempt in
                guard attempt.id == id else { return false }
                attempt.durationMilliseconds = durationMilliseconds
                attempt.closedEarly = closedEarly
                return true
            }
            shard.sessions.append(key, record)
        }
    }

    /// The stream of events of attempt `id` is over: notes its last id and retry.
    func streamEnded(_ id: UInt64, lastEventID: String?, retryMilliseconds: Int?) {
        guard let key = openStreams.withLock({ $0.removeValue(forKey: id) }) else { return }
        shard(key).state.withLock { shard in
            guard var record = shard.sessions.removeValue(forKey: key) else { return }
            record.attempts.update { attempt in
                guard attempt.id == id else { return false }
                attempt.eventStream = ClientAttempt.StreamSent(over: true, lastEventID: lastEventID, retryMilliseconds: retryMilliseconds)
                return true
            }
            shard.sessions.append(key, record)
        }
    }

    /// What a session's verdict judges on.
    enum Lookup {
        case kept(Record)
        /// The session had requests, but they were let go of to make room for newer sessions.
        case evicted
        case none
    }

    /// The history of `session` (nil: the requests without one).
    func lookup(session: String?) -> Lookup {
        let key = SessionKey(name: session)
        return shard(key).state.withLock { shard in
            if let record = shard.sessions[key] { return .kept(record) }
            return shard.evicted.items.contains(key.hashValue) ? .evicted : .none
        }
    }

    /// Forgets everything, or one session's history.
    func clear(session: String?? = .none) {
        switch session {
        case .none:
            for shard in shards { shard.state.withLock { $0 = Shard() } }
            sessionlessStarted.store(false, ordering: .relaxed)
            following.withLock { $0.removeAll() }
            followingCount.store(0, ordering: .relaxed)
            openStreams.withLock { $0.removeAll() }
        case .some(let name):
            let key = SessionKey(name: name)
            shard(key).state.withLock { shard in
                if let record = shard.sessions.removeValue(forKey: key) { shard.attemptCount -= record.attempts.count }
            }
            if name == nil { sessionlessStarted.store(false, ordering: .relaxed) }
            following.withLock { open in
                open = open.filter { $0.value.session != key }
                followingCount.store(open.count, ordering: .relaxed)
            }
        }
    }
}
