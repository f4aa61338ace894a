import MishapSupport

/// The changes to a scenarios folder seen and not yet reported, and when they may be: once
/// there has been `settle` of quiet (a burst, such as an editor's save, is reported once), and
/// once every file last seen being written in place (or made) has not changed for
/// `writeSettle`, so a file written in several steps is read whole, not half-written. A file
/// renamed into place (an atomic save) or removed needs only the quiet: its name names a whole
/// file, or none.
struct PendingChanges {
    let settle: Duration
    let writeSettle: Duration
    /// When the last change was seen; nil when none is pending.
    private(set) var lastChange: ContinuousClock.Instant?
    /// The files whose last change was a write, and when it was seen.
    private var written: [String: ContinuousClock.Instant] = [:]

    init(settle: Duration, writeSettle: Duration) {
        self.settle = settle
        self.writeSettle = writeSettle
    }

    /// Notes a change at `now`: to the file `key` (written, or moved into or out of place), or,
    /// with no key, to something else (a folder, attributes, events lost).
    mutating func note(_ change: FileEvents.Event.Change, of key: String? = nil, at now: ContinuousClock.Instant) {
        lastChange = now
        guard let key else { return }
        switch change {
        case .written: written[key] = now
        case .moved: written[key] = nil
        case .other: break
        }
    }

    /// When the changes may be reported; nil when none is pending.
    var reportAt: ContinuousClock.Instant? {
        guard let lastChange else { return nil }
        let quiet = lastChange + settle
        guard let lastWrite = written.values.max() else { return quiet }
        return max(quiet, lastWrite + writeSettle)
    }

    /// Forgets the changes, once reported.
    mutating func reset() {
        lastChange = nil
        written = [:]
    }
}
