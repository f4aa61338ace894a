import MishapSupport

/// A table from strings to values, built once from the scenarios and then only read: the
/// request path's lookups (an endpoint's literal path, a run of magic inputs) go through it
/// instead of `Dictionary`.
///
/// It is open addressing over a power-of-two array of slots, keyed by FNV-1a of the UTF-8
/// bytes and compared byte for byte. A `Dictionary<String, _>` lookup hashes with the
/// per-process seeded SipHash, about 500 instructions for a short path; this one costs a
/// fifth of that. The seed protects a table that clients fill; this table's keys come from
/// scenario files only, so whatever a client sends, a lookup costs at most the longest probe
/// sequence among the table's own keys.
///
/// A class, so that the rule index's steps and the engine hold it as one reference: as a
/// generic struct of four arrays, every copy of a step went through value witnesses.
final class StringTable<Value: Sendable>: Sendable {
    /// Per slot: 0 where no key lives, else the key's hash with bit 32 set. The table is at
    /// most half full, so every probe sequence ends at an empty slot.
    private let tags: [UInt64]
    /// Per slot: where its key's bytes start in `keyBytes`, and how many there are.
    private let keyRanges: [(start: Int, count: Int)]
    private let keyBytes: [UInt8]
    private let values: [Value?]
    private let mask: Int
    /// The number of keys.
    let count: Int

    /// A table of `entries`; a key given twice keeps its last value, as `Dictionary` would.
    init(_ entries: some Sequence<(key: String, value: Value)>) {
        var unique: [(key: String, value: Value)] = []
        var positions: [String: Int] = [:]
        for (key, value) in entries {
            if let position = positions[key] {
                unique[position].value = value
            } else {
                positions[key] = unique.count
                unique.append((key, value))
            }
        }
        var capacity = 2
        while capacity < unique.count * 2 { capacity *= 2 }
        var tags = [UInt64](repeating: 0, count: capacity)
        var keyRanges = [(start: Int, count: Int)](repeating: (0, 0), count: capacity)
        var keyBytes: [UInt8] = []
        var values = [Value?](repeating: nil, count: capacity)
        for (key, value) in unique {
            let bytes = Array(key.utf8)
            let hash = bytes.withUnsafeBufferPointer(Self.hash)
            var position = Int(hash) & (capacity - 1)
            while tags[position] != 0 { position = (position + 1) & (capacity - 1) }
            tags[position] = Self.tag(hash)
            keyRanges[position] = (keyBytes.count, bytes.count)
            keyBytes += bytes
            values[position] = value
        }
        self.tags = tags
        self.keyRanges = keyRanges
        self.keyBytes = keyBytes
        self.values = values
        self.mask = capacity - 1
        self.count = unique.count
    }

    /// The value of `key`, if the table has it.
    subscript(key: String) -> Value? {
        if let found = key.utf8.withContiguousStorageIfAvailable(value(of:)) { return found }
        return Array(key.utf8).withUnsafeBufferPointer(value(of:))
    }

    /// The value of the key whose UTF-8 bytes are `bytes`.
    private func value(of bytes: UnsafeBufferPointer<UInt8>) -> Value? {
        let tag = Self.tag(Self.hash(bytes))
        var position = Int(truncatingIfNeeded: tag) & mask
        while true {
            let found = tags[position]
            if found == 0 { return nil }
            if found == tag, keyRanges[position].count == bytes.count, equalKey(at: keyRanges[position].start, bytes) {
                return values[position]
            }
            position = (position + 1) & mask
        }
    }

    /// Whether the key bytes from `start` are `bytes`.
    private func equalKey(at start: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.isEmpty || keyBytes.withUnsafeBufferPointer { memcmp($0.baseAddress! + start, bytes.baseAddress!, bytes.count) == 0 }
    }

    /// Every key and its value, in no particular order.
    var entries: [(key: String, value: Value)] {
        tags.indices.compactMap { position in
            guard tags[position] != 0, let value = values[position] else { return nil }
            let range = keyRanges[position]
            return (String(decoding: keyBytes[range.start..<range.start + range.count], as: UTF8.self), value)
        }
    }

    private static func tag(_ hash: UInt32) -> UInt64 { UInt64(hash) | 1 << 32 }

    /// 32-bit FNV-1a.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return hash
    }
}
