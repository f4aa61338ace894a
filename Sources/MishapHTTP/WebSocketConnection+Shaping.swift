import MishapSupport

/// A socket's frames under a network profile (`WebSocketShaper`), on the loop's timers: frames
/// let go when their latency and the bandwidth allow, and the profile's reset after N bytes of
/// frames, once the client has taken them (`SocketDrain`): a RST without a close frame, which a
/// client reports as 1006.
extension WebSocketConnection {
    /// Writes what the profile lets go at `now`; at its reset, waits for the client to take the
    /// bytes, then finishes the socket with a reset. True when the socket is done for this turn
    /// (resetting: nothing else of the script runs).
    func runShaper(now: Int64) -> Bool {
        guard let shaper else { return false }
        let bytes = shaper.release(now: now)
        if !bytes.isEmpty {
            if written > 0 && written == output.count {
                output.removeAll(keepingCapacity: true)
                written = 0
            }
            output.append(contentsOf: bytes)
            writable()
        }
        // Finished already (the script's own end came first): the loop lets go of it as it says.
        guard shaper.reachedReset, let resetAt = shaper.resetAt, !isFinished else { return false }
        if wantsToWrite {
            // Its last bytes are still to be written: the loop polls for room.
            drainCheckAt = now + Int64(SocketDrain.stepMilliseconds)
            return true
        }
        if drainCheckAt == nil || now >= drainCheckAt! {
            if drain.shouldWait(for: resetAt) {
                drainCheckAt = now + Int64(SocketDrain.stepMilliseconds)
                return true
            }
            drainCheckAt = nil
            noteEnding(WebSocketOutcome(how: .reset, by: "network"))
            phase = .finished(.reset)
            self.shaper = nil
        }
        return true
    }

    /// When the closing wait after the server's close frame ends: two seconds after the frame
    /// goes, which under a profile is when the last frame waiting is due.
    func closingDeadline() -> Int64 {
        let now = MonotonicClock.milliseconds()
        return max(now, shaper?.lastWaitingDue ?? now) + Self.closingMilliseconds
    }
}
