import Synchronization

/// A limit on bytes held at once by many holders together: what upstream answers may hold in
/// Mishap's memory, from their first byte received to their last byte sent, however many
/// clients read them slowly. Each holder takes a `MemoryLease`, grows it before it allocates,
/// and gives it back by letting it go.
public final class MemoryBudget: Sendable {
    /// The most bytes held at once.
    public let limit: Int
    private let held = Atomic<Int>(0)

    public init(limit: Int) {
        self.limit = limit
    }

    /// Bytes held now, by every lease.
    public var bytesHeld: Int { held.load(ordering: .relaxed) }

    /// A lease of no bytes yet.
    public func lease() -> MemoryLease {
        MemoryLease(budget: self)
    }

    /// Takes `bytes` more if the total stays within the limit.
    fileprivate func take(_ bytes: Int) -> Bool {
        var current = held.load(ordering: .relaxed)
        while true {
            guard current + bytes <= limit else { return false }
            let (exchanged, original) = held.compareExchange(expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    fileprivate func give(_ bytes: Int) {
        held.subtract(bytes, ordering: .relaxed)
    }
}

/// One holder's share of a `MemoryBudget`: grown before its memory is allocated, given back in
/// full when the lease goes (the last reference to it is released), on whatever thread that is.
public final class MemoryLease: Sendable {
    /// The budget it is a share of.
    public let budget: MemoryBudget
    private let held = Atomic<Int>(0)

    fileprivate init(budget: MemoryBudget) {
        self.budget = budget
    }

    /// Bytes this lease holds.
    public var bytes: Int { held.load(ordering: .relaxed) }

    /// Holds `bytes` in all (no change when it holds that many already); false, holding what it
    /// held, when the budget has not that much left.
    public func grow(to bytes: Int) -> Bool {
        let more = bytes - held.load(ordering: .relaxed)
        guard more > 0 else { return true }
        guard budget.take(more) else { return false }
        held.add(more, ordering: .relaxed)
        return true
    }

    deinit {
        budget.give(held.load(ordering: .relaxed))
    }
}
