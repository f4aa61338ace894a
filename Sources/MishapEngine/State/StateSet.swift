/// One set of state values: the shared set, or one session's. Touched only while its store's
/// lock is held (see `StateStore.withSet`), which is what makes a rule's test-and-change atomic.
final class StateSet: @unchecked Sendable {
    let declarations: [StateDeclaration]
    private var values: [StateValue]
    /// When each value reverts to its initial value, in `MonotonicClock` milliseconds;
    /// `Int64.max` for never.
    private var expiries: [Int64]

    /// A new set at `now`: initial values, or the declared start values for their while.
    init(declarations: [StateDeclaration], now: Int64) {
        self.declarations = declarations
        values = declarations.map { $0.start?.value ?? $0.initial }
        expiries = declarations.map { declaration in
            declaration.start.map { now + Int64($0.milliseconds) } ?? .max
        }
    }

    /// A set for `declarations` keeping the values of `old` whose declarations are unchanged
    /// (same name, initial value and start); the others start anew.
    init(declarations: [StateDeclaration], carryingOver old: StateSet, now: Int64) {
        self.declarations = declarations
        values = declarations.map { $0.start?.value ?? $0.initial }
        expiries = declarations.map { declaration in
            declaration.start.map { now + Int64($0.milliseconds) } ?? .max
        }
        for (slot, declaration) in declarations.enumerated() {
            guard let oldSlot = old.declarations.firstIndex(where: { $0.sameValue(as: declaration) }) else { continue }
            values[slot] = old.values[oldSlot]
            expiries[slot] = old.expiries[oldSlot]
        }
    }

    /// The value in `slot` at `now` (its initial value once a change made for a while has expired).
    func value(_ slot: Int, now: Int64) -> StateValue {
        if now >= expiries[slot] {
            values[slot] = declarations[slot].initial
            expiries[slot] = .max
        }
        return values[slot]
    }

    /// Milliseconds until the value in `slot` reverts, or nil when it does not.
    func remaining(_ slot: Int, now: Int64) -> Int64? {
        _ = value(slot, now: now)
        return expiries[slot] == .max ? nil : expiries[slot] - now
    }

    /// Sets `slot` to `value`, for good or until `expiresAt`.
    func set(_ slot: Int, to value: StateValue, expiresAt: Int64 = .max) {
        values[slot] = value
        expiries[slot] = expiresAt
    }

    /// Brings every expiry `milliseconds` closer, as if that time had passed.
    func moveClock(by milliseconds: Int64) {
        for slot in expiries.indices where expiries[slot] != .max {
            expiries[slot] = expiries[slot] &- milliseconds
        }
    }
}
