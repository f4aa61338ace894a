import Synchronization

/// A set of keys split into shards by hash, each behind a lock of its own: looking a key up
/// takes one shard's lock only, so lookups of different keys seldom wait for one another, and
/// never for whoever holds a lock around the set.
final class ShardedKeySet<Key: Hashable & Sendable>: Sendable {
    /// One shard: its keys and their lock.
    private final class Shard: Sendable {
        let keys = Mutex<Set<Key>>([])
    }

    private let shards: [Shard]

    /// A set of `shardCount` shards (at least one).
    init(shardCount: Int = 64) {
        shards = (0..<max(1, shardCount)).map { _ in Shard() }
    }

    private func shard(of key: Key) -> Shard {
        shards[Int(UInt(bitPattern: key.hashValue) % UInt(shards.count))]
    }

    /// True when the set holds `key`.
    func contains(_ key: Key) -> Bool {
        shard(of: key).keys.withLock { $0.contains(key) }
    }

    /// Adds `key`.
    func insert(_ key: Key) {
        shard(of: key).keys.withLock { _ = $0.insert(key) }
    }

    /// Removes `key`, if held.
    func remove(_ key: Key) {
        shard(of: key).keys.withLock { _ = $0.remove(key) }
    }

    /// Removes every key.
    func removeAll() {
        for shard in shards {
            shard.keys.withLock { $0.removeAll() }
        }
    }
}
