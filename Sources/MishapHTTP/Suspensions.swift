import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
import MishapSupport

/// The connections held suspended (delayed, hanging, waiting for an upstream's answer, or
/// between dribbled pieces), so each is
/// resumed exactly once: by its timer, when its client goes away, or when the server stops.
///
/// libmicrohttpd aborts if the daemon stops with a connection still suspended, and a resume
/// after the daemon is gone is a use after free: every suspend and resume happens under one
/// lock, and once stopping begins nothing new is suspended
/// (docs/libmicrohttpd.md, "Stopping with a suspended connection aborts").
final class Suspensions: Sendable {
    private struct State {
        var stopping = false
        var nextKey: UInt64 = 0
        var held: [UInt64: UInt] = [:]
        /// The keys of hanging requests (the rest wait on a timer).
        var hanging: Set<UInt64> = []
        /// Set once stopping begins: new hangs are refused (delays are still held).
        var refusingHangs = false
    }

    private let state = Mutex(State())
    /// How often a hanging request checks that its client is still there.
    static let hangCheckMilliseconds = 250

    /// Suspends `connection` and resumes it after `milliseconds`. Returns false, without
    /// suspending, once the server is stopping.
    func hold(_ connection: OpaquePointer, milliseconds: Int) -> Bool {
        guard let key = suspend(connection) else { return false }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [weak self] in
            self?.resume(key)
        }
        return true
    }

    /// Suspends `connection` until its client closes the socket or the server stops.
    func holdUntilClientLeaves(_ connection: OpaquePointer, socket: Int32) -> Bool {
        guard let key = suspend(connection, hanging: true) else { return false }
        watch(key, socket: socket, left: Socket.peerClosed)
        return true
    }

    /// Suspends `connection`, whose client is still sending a body that is left unread (a
    /// stalled upload), until the client closes the socket or the server stops. Unread bytes
    /// hide a close from a peek, so the check asks poll for a hang-up (`POLLRDHUP`)
    /// (docs/libmicrohttpd.md, "Unread bytes hide a client's close").
    func holdStalledUpload(_ connection: OpaquePointer, socket: Int32) -> Bool {
        guard let key = suspend(connection, hanging: true) else { return false }
        watch(key, socket: socket, left: Self.hungUp)
        return true
    }

    /// Whether the peer of `socket` has closed its side or reset it, unread bytes or not.
    private static func hungUp(_ socket: Int32) -> Bool {
        var polled = pollfd(fd: socket, events: readHangUp, revents: 0)
        guard poll(&polled, 1, 0) > 0 else { return false }
        return polled.revents & (readHangUp | Int16(POLLHUP | POLLERR | POLLNVAL)) != 0
    }

    #if os(Linux)
    /// `POLLRDHUP` (Linux), which Glibc defines only under `_GNU_SOURCE`.
    private static let readHangUp: Int16 = 0x2000
    #else
    private static let readHangUp: Int16 = 0
    #endif

    /// Suspends `connection` until `release(_:)` is called with the key returned (an upstream's
    /// answer came), or the server stops. Nil, without suspending, once the server is stopping.
    func holdForAnswer(_ connection: OpaquePointer) -> UInt64? {
        suspend(connection)
    }

    /// Resumes the connection held under `key`, if it still is (not when the server has
    /// resumed it already to stop).
    func release(_ key: UInt64) {
        resume(key)
    }

    /// Resumes the hanging requests (so their connections close) and lets timers run on.
    func releaseHangs() {
        state.withLock { state in
            state.refusingHangs = true
            for key in Array(state.hanging) { resumeLocked(key, &state) }
        }
    }

    private func watch(_ key: UInt64, socket: Int32, left: @escaping @Sendable (Int32) -> Bool) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Self.hangCheckMilliseconds)) { [weak self] in
            guard let self else { return }
            let stillHeld = state.withLock { state -> Bool in
                guard state.held[key] != nil else { return false }
                if left(socket) {
                    resumeLocked(key, &state)
                    return false
                }
                return true
            }
            if stillHeld { watch(key, socket: socket, left: left) }
        }
    }

    /// True once `stop()` has begun: a connection resumed from then on is closed, not answered.
    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Resumes everything held and refuses new holds; called before the daemon stops.
    func stop() {
        state.withLock { state in
            state.stopping = true
            for key in Array(state.held.keys) { resumeLocked(key, &state) }
        }
    }

    private func suspend(_ connection: OpaquePointer, hanging: Bool = false) -> UInt64? {
        state.withLock { state in
            guard !state.stopping, !(hanging && state.refusingHangs) else { return nil }
            MHD_suspend_connection(connection)
            state.nextKey += 1
            state.held[state.nextKey] = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
            if hanging { state.hanging.insert(state.nextKey) }
            return state.nextKey
        }
    }

    private func resume(_ key: UInt64) {
        state.withLock { resumeLocked(key, &$0) }
    }

    private func resumeLocked(_ key: UInt64, _ state: inout State) {
        state.hanging.remove(key)
        guard let bits = state.held.removeValue(forKey: key),
              let connection = OpaquePointer(bitPattern: bits) else { return }
        MHD_resume_connection(connection)
    }
}
