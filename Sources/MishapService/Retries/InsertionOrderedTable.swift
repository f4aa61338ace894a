/// A dictionary that remembers the order its keys were added in: adding a key (at the end),
/// finding or removing any key, and removing the oldest each cost O(1), whatever the count.
/// The entries form a doubly linked list threaded through one array of slots, indexed by a
/// dictionary from key to slot; freed slots are reused.
struct InsertionOrderedTable<Key: Hashable, Value> {
    private struct Slot {
        var key: Key
        var value: Value
        var previous: Int
        var next: Int
    }

    private static var none: Int { -1 }
    private var slots: [Slot?] = []
    private var freeSlots: [Int] = []
    private var slotOfKey: [Key: Int] = [:]
    private var first = Self.none
    private var last = Self.none
    /// How many slots the operations have read or written, for tests that count work instead
    /// of timing it.
    private(set) var slotsVisited = 0

    /// How many entries the table holds.
    var count: Int { slotOfKey.count }

    /// The value of `key`, if the table holds it.
    subscript(key: Key) -> Value? {
        slotOfKey[key].flatMap { slots[$0]?.value }
    }

    /// The oldest entry, if any.
    var oldest: (key: Key, value: Value)? {
        guard first != Self.none, let slot = slots[first] else { return nil }
        return (slot.key, slot.value)
    }

    /// Adds `key` as the newest entry; a key already held is removed first.
    mutating func append(_ key: Key, _ value: Value) {
        removeValue(forKey: key)
        let slot = Slot(key: key, value: value, previous: last, next: Self.none)
        let index: Int
        if let reused = freeSlots.popLast() {
            index = reused
            slots[index] = slot
        } else {
            index = slots.count
            slots.append(slot)
        }
        slotsVisited += 1
        if last != Self.none {
            slots[last]?.next = index
            slotsVisited += 1
        } else {
            first = index
        }
        last = index
        slotOfKey[key] = index
    }

    /// Removes `key` and returns its value, if the table held it.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let index = slotOfKey.removeValue(forKey: key), let slot = slots[index] else { return nil }
        unlink(slot, at: index)
        return slot.value
    }

    /// Removes the oldest entry and returns it, if any.
    @discardableResult
    mutating func removeOldest() -> (key: Key, value: Value)? {
        guard first != Self.none, let slot = slots[first] else { return nil }
        slotOfKey.removeValue(forKey: slot.key)
        unlink(slot, at: first)
        return (slot.key, slot.value)
    }

    /// Removes every entry `shouldRemove` picks (O(count)) and returns their keys.
    @discardableResult
    mutating func removeAll(where shouldRemove: (Key, Value) -> Bool) -> [Key] {
        var removed: [Key] = []
        var index = first
        while index != Self.none, let slot = slots[index] {
            if shouldRemove(slot.key, slot.value) {
                removed.append(slot.key)
                slotOfKey.removeValue(forKey: slot.key)
                unlink(slot, at: index)
            }
            index = slot.next
        }
        return removed
    }

    /// The values, oldest first.
    var values: [Value] {
        var values: [Value] = []
        values.reserveCapacity(count)
        var index = first
        while index != Self.none, let slot = slots[index] {
            values.append(slot.value)
            index = slot.next
        }
        return values
    }

    /// Takes the slot at `index` out of the list and frees it.
    private mutating func unlink(_ slot: Slot, at index: Int) {
        slotsVisited += 1
        if slot.previous != Self.none {
            slots[slot.previous]?.next = slot.next
            slotsVisited += 1
        } else {
            first = slot.next
        }
        if slot.next != Self.none {
            slots[slot.next]?.previous = slot.previous
            slotsVisited += 1
        } else {
            last = slot.previous
        }
        slots[index] = nil
        freeSlots.append(index)
    }
}
