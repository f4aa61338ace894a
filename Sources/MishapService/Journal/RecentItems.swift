/// The last `capacity` items appended, in a ring: appending costs O(1) and, once full, drops
/// the oldest item without moving the others.
struct RecentItems<Item> {
    let capacity: Int
    private var storage: [Item] = []
    /// Where the oldest item is, once the ring is full.
    private var start = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many items are held.
    var count: Int { storage.count }

    /// Adds `item` as the newest, dropping the oldest when full.
    mutating func append(_ item: Item) {
        if storage.count < capacity {
            storage.append(item)
        } else {
            storage[start] = item
            start = (start + 1) % capacity
        }
    }

    /// The items, oldest first.
    var items: [Item] {
        Array(storage[start...] + storage[..<start])
    }

    /// Keeps only the items `shouldKeep` picks, in their order (O(count)).
    mutating func keepOnly(where shouldKeep: (Item) -> Bool) {
        storage = items.filter(shouldKeep)
        start = 0
    }

    /// Changes the newest item `change` takes (it returns true when it did), looking from the
    /// newest back.
    mutating func update(_ change: (inout Item) -> Bool) {
        var offset = storage.count
        while offset > 0 {
            offset -= 1
            let index = (start + offset) % storage.count
            if change(&storage[index]) { return }
        }
    }
}
