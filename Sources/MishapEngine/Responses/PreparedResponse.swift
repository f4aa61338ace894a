import Synchronization

/// A response that is the same for every request (no placeholders, no timing, no fault). The
/// server builds its own ready-to-send form once and keeps it here, opaque to the engine, so
/// such a response costs no allocation per request.
public final class PreparedResponse: Sendable {
    /// What to send.
    public let plan: ResponsePlan
    private let serverForm = Atomic<UInt>(0)
    private let release = Mutex<(@Sendable (UInt) -> Void)?>(nil)

    init(plan: ResponsePlan) {
        self.plan = plan
    }

    /// The server's form of this response, built by `make` on first use (if two threads race,
    /// one form wins and the other is released). `release` frees it when the response goes.
    public func serverForm(make: () -> UInt, release: @escaping @Sendable (UInt) -> Void) -> UInt {
        let existing = serverForm.load(ordering: .acquiring)
        if existing != 0 { return existing }
        let made = make()
        guard made != 0 else { return 0 }
        self.release.withLock { $0 = release }
        let (won, current) = serverForm.compareExchange(expected: 0, desired: made, ordering: .acquiringAndReleasing)
        if won { return made }
        release(made)
        return current
    }

    deinit {
        let form = serverForm.load(ordering: .acquiring)
        if form != 0, let release = release.withLock({ $0 }) { release(form) }
    }
}
