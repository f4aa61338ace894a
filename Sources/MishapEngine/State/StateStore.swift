import Synchronization

/// The state values of every set: one shared by requests without a session, and one per
/// session (`X-Mishap-Session`), made when first touched and bounded like cycle counts: past
/// `limit` sessions the least recently seen are forgotten and start over if they come back.
///
/// One lock guards every set. A rule that tests and changes state holds it from its first test
/// to its last change, so concurrent requests of a session never lose an update nor both pass
/// a test only one should.
public final class StateStore: Sendable {
    /// The declared values, in slot order.
    public let declarations: [StateDeclaration]
    /// This store's number, unique in the process: rules compiled against its slots (rules
    /// added at runtime, compiled again for each store a reload makes) say which store they
    /// were compiled for, so no rule is ever evaluated against another store's slots.
    public let generation: Int
    private static let generations = Atomic<Int>(1)
    private let slots: [String: Int]
    private let sets: Mutex<Sets>

    struct Sets: Sendable {
        var shared: StateSet?
        var sessions = SessionTable<StateSet>()
    }

    /// A store for `declarations`; with `previous`, the values of unchanged declarations carry
    /// over (shared and per session), read at `now`.
    public init(declarations: [StateDeclaration], carryingOver previous: StateStore? = nil, now: Int64 = 0) {
        self.declarations = declarations
        generation = Self.generations.wrappingAdd(1, ordering: .relaxed).oldValue
        var slots: [String: Int] = [:]
        for (slot, declaration) in declarations.enumerated() { slots[declaration.name] = slot }
        self.slots = slots
        let carried: Sets? = previous?.sets.withLock { old in
            Sets(shared: old.shared.map { StateSet(declarations: declarations, carryingOver: $0, now: now) },
                 sessions: old.sessions.mapValues { StateSet(declarations: declarations, carryingOver: $0, now: now) })
        }
        self.sets = Mutex(carried ?? Sets())
    }

    /// The slot of the value called `name`.
    public func slot(named name: String) -> Int? {
        slots[name]
    }

    /// Makes the shared set now, unless it exists: a declared start value's while begins here,
    /// at start-up, not at the first request.
    func prepareShared(now: Int64) {
        sets.withLock { sets in
            if sets.shared == nil { sets.shared = StateSet(declarations: declarations, now: now) }
        }
    }

    /// Runs `body` with the session's set (the shared one without a session), holding the lock.
    func withSet<Result: Sendable>(session: String?, now: Int64, limit: Int, _ body: (StateSet) -> Result) -> Result {
        sets.withLock { sets in
            let set: StateSet
            if let session {
                set = sets.sessions.value(for: session, limit: limit) {
                    StateSet(declarations: declarations, now: now)
                }
            } else if let shared = sets.shared {
                set = shared
            } else {
                set = StateSet(declarations: declarations, now: now)
                sets.shared = set
            }
            return body(set)
        }
    }

    /// The values of the session's set (the shared one without a session) at `now`, each with
    /// the milliseconds until it reverts. A session not seen has its initial values.
    public func snapshot(session: String?, now: Int64) -> [(declaration: StateDeclaration, value: StateValue, remaining: Int64?)] {
        sets.withLock { sets in
            let set = session.map { sets.sessions.peek($0) } ?? sets.shared
            return declarations.enumerated().map { slot, declaration in
                guard let set else { return (declaration, declaration.initial, nil) }
                return (declaration, set.value(slot, now: now), set.remaining(slot, now: now))
            }
        }
    }

    /// Sets values of the session's set (the shared one without a session), each for good or
    /// for some milliseconds; the changes, as the journal shows them.
    public func set(_ changes: [(slot: Int, value: StateValue, milliseconds: Int?)], session: String?, now: Int64,
                    limit: Int) -> [StateChange] {
        withSet(session: session, now: now, limit: limit) { set in
            changes.map { change in
                let before = set.value(change.slot, now: now)
                set.set(change.slot, to: change.value, expiresAt: change.milliseconds.map { now + Int64($0) } ?? .max)
                return StateChange(name: declarations[change.slot].name, from: before, to: change.value,
                                   milliseconds: change.milliseconds)
            }
        }
    }

    /// Starts every set over (the shared one at `now`, as at start-up).
    public func reset(now: Int64) {
        sets.withLock { sets in
            sets = Sets()
            sets.shared = StateSet(declarations: declarations, now: now)
        }
    }

    /// Moves the expiries of `session`'s values `milliseconds` closer (its clock moved forward).
    func moveClock(session: String, by milliseconds: Int64) {
        sets.withLock { sets in sets.sessions.peek(session)?.moveClock(by: milliseconds) }
    }

    /// Starts one session's set over.
    public func reset(session: String) {
        sets.withLock { $0.sessions.remove(session) }
    }

    /// The sessions whose sets are kept now.
    public var sessionCount: Int {
        sets.withLock { $0.sessions.count }
    }
}

/// A change a rule (or an admin call) made to a state value, as the journal records it.
public struct StateChange: Sendable, Equatable {
    public let name: String
    public let from: StateValue
    public let to: StateValue
    /// How long the new value lasts before reverting to the initial one; nil for good.
    public let milliseconds: Int?

    public init(name: String, from: StateValue, to: StateValue, milliseconds: Int?) {
        self.name = name
        self.from = from
        self.to = to
        self.milliseconds = milliseconds
    }
}
