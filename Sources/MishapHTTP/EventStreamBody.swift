import CMicroHTTPD
import CMicroHTTPDShim
import Dispatch
import MishapEngine
import MishapSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A stream of Server-Sent Events (`EventStreamPlan`) that libmicrohttpd pulls as a chunked
/// body. Each event is written when it is due; while waiting, the connection is suspended with
/// a timer (`Suspensions.hold`), so no worker thread waits, and woken at least every
/// `Suspensions.hangCheckMilliseconds` to see whether the client has left. Heartbeats are
/// comment lines written while waiting. After the last event the stream ends cleanly, or as
/// its fault says.
///
/// Under a network profile (`NetworkShaping`) its bytes go at the profile's bandwidth, with its
/// per-chunk latency and jitter between pieces (`StreamPacer`): an event may arrive later than
/// its schedule, never earlier, and never before the one ahead of it. The profile's
/// `resetAfterBytes` counts the stream's bytes (events and heartbeats; a fraction is of one
/// pass of the listed events) and resets the connection once they are sent and taken
/// (`SocketDrain`); its `slowClose` holds the end of a stream that ends cleanly.
final class EventStreamBody {
    let plan: EventStreamPlan
    let connection: OpaquePointer
    let socket: Int32
    let suspensions: Suspensions
    /// What was sent, read by the server when the request is done (for the journal).
    let progress: EventStreamProgress

    /// The next event to send: its pass through the list and its index in it.
    private var pass = 0
    private var index = 0
    /// Bytes written into libmicrohttpd's buffer but not yet handed over (an event larger than
    /// one read's capacity), and how many of them went.
    private var pending: [UInt8] = []
    private var pendingSent = 0
    /// When the next event is due (uptime nanoseconds); set when the one before it went.
    private var nextDue: UInt64?
    /// When the last byte went (uptime nanoseconds), from which the heartbeat counts.
    private var lastWrite: UInt64 = 0
    /// Set once the stream waited a moment before its fault (so its last event went).
    private var flushedBeforeReset = false
    /// Set when the connection was suspended: on waking, the stream checks its client is there.
    private var held = false
    /// The network profile's pacing, its reset after this many bytes of the stream, and its
    /// slow close (milliseconds; 0: none).
    private var pacer: StreamPacer?
    private let resetAt: Int?
    private let slowCloseMilliseconds: Int
    private var closeWaited = false
    /// Bytes of the stream handed to libmicrohttpd (events and heartbeats, before chunking).
    private var streamBytes = 0
    private let drain: SocketDrain

    init(plan: EventStreamPlan, network: NetworkShaping? = nil, connection: OpaquePointer, suspensions: Suspensions,
         progress: EventStreamProgress) {
        self.plan = plan
        self.connection = connection
        socket = mishap_connection_fd(connection)
        self.suspensions = suspensions
        self.progress = progress
        pacer = network.flatMap { StreamPacer($0, largestPiece: Self.blockBytes) }
        resetAt = network?.resetAfter.map { max($0.bytes(of: plan.events.reduce(0) { $0 + $1.bytes.count }), 0) }
        slowCloseMilliseconds = network.map { max($0.slowCloseMilliseconds, 0) } ?? 0
        drain = SocketDrain(socket: socket)
    }

    /// libmicrohttpd's block for the stream: the most one read can fill.
    static let blockBytes = 16 * 1024

    deinit {
        progress.released()
    }

    /// Fills `buffer`; returns the byte count, 0 to wait (the connection suspended), or an end marker.
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        drain.start()
        if let resetAt, streamBytes >= resetAt { return resetByNetwork(at: resetAt) }
        if pendingSent < pending.count { return handOver(into: buffer, capacity: capacity) }
        let now = DispatchTime.now().uptimeNanoseconds
        if lastWrite == 0 { lastWrite = now }
        if held, suspensions.isStopping || Socket.peerClosed(socket) {
            // The client left while the stream waited, or the server is stopping: no more bytes.
            return cutShort()
        }
        held = false
        if plan.events.isEmpty { return finish() }
        if let passes = plan.passes, pass >= passes { return finish() }
        let event = plan.events[index]
        let due = nextDue ?? (now + UInt64(event.delayMilliseconds) * 1_000_000)
        nextDue = due
        if now < due {
            var wake = due
            if let heartbeat = plan.heartbeatMilliseconds {
                let beat = lastWrite + UInt64(heartbeat) * 1_000_000
                if beat <= now {
                    lastWrite = now
                    pending = EventStreamPlan.heartbeatLine
                    pendingSent = 0
                    return handOver(into: buffer, capacity: capacity)
                }
                wake = min(wake, beat)
            }
            let milliseconds = Int((wake - now + 999_999) / 1_000_000)
            if suspensions.hold(connection, milliseconds: min(milliseconds, Suspensions.hangCheckMilliseconds)) {
                held = true
                return 0
            }
            return cutShort()
        }
        // The event is due: it goes, and the next one is due its delay after this one was
        // (after the schedule, not after a late write, so delays do not add up).
        pending = event.bytes
        pendingSent = 0
        lastWrite = now
        progress.sent(event)
        index += 1
        if index == plan.events.count {
            index = 0
            pass += 1
        }
        if let passes = plan.passes, pass >= passes {
            nextDue = nil
        } else {
            // Unless the client fell far behind: then the next delay counts from now.
            nextDue = (now > due + 200_000_000 ? now : due) + UInt64(plan.events[index].delayMilliseconds) * 1_000_000
        }
        return handOver(into: buffer, capacity: capacity)
    }

    private func handOver(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        var count = min(pending.count - pendingSent, capacity)
        if let resetAt { count = min(count, resetAt - streamBytes) }
        if var pacer {
            let now = DispatchTime.now().uptimeNanoseconds
            let wait = pacer.wait(now: now)
            if wait > 0 {
                if held, suspensions.isStopping || Socket.peerClosed(socket) { return cutShort() }
                // Held until the profile lets the next piece go (checking at least every quarter
                // second that the client is there); a stopping server sends it at once.
                let milliseconds = min(Int((wait + 999_999) / 1_000_000), Suspensions.hangCheckMilliseconds)
                if suspensions.hold(connection, milliseconds: milliseconds) {
                    held = true
                    return 0
                }
            }
            held = false
            count = min(count, pacer.pieceBytes)
            pacer.sent(count, now: now)
            self.pacer = pacer
        }
        streamBytes += count
        pending.withUnsafeBufferPointer { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + pendingSent, byteCount: count)
        }
        pendingSent += count
        if pendingSent == pending.count {
            pending = []
            pendingSent = 0
        }
        return count
    }

    /// The events are all sent: end cleanly, or carry out the stream's fault.
    private func finish() -> Int {
        switch plan.fault {
        case nil:
            if slowCloseMilliseconds > 0, !closeWaited {
                // The profile's slow close: the last event is out, the stream's end comes later
                // (and the connection closes with it: `Connection: close`).
                closeWaited = true
                if suspensions.hold(connection, milliseconds: slowCloseMilliseconds) { return 0 }
            }
            return StreamedBody.endOfStream
        case .close, .reset:
            if !flushedBeforeReset {
                // A moment's wait first, the connection suspended, so the last event reaches
                // the client before the break. Measured: a reset in the read just after the
                // last event's came out as a FIN on 3 runs of 3, with the wait a RST on 3 of 3
                // (the same as a network profile's reset after no byte of the body,
                // docs/libmicrohttpd.md, "A reset after some bytes of the body").
                flushedBeforeReset = true
                if suspensions.hold(connection, milliseconds: 5) { return 0 }
            }
            if plan.fault == .reset {
                progress.end(.reset)
                resetNow()
            } else {
                progress.end(.close)
                // Under MHD_USE_TURBO an error end leaves the socket open until timeout
                // (docs/libmicrohttpd.md, "An error end under TURBO leaves the socket open"):
                // the shutdown sends the FIN, after the bytes already written.
                Socket.shutDown(socket)
            }
            return StreamedBody.endWithError
        case .stall:
            progress.end(.stall)
            if !flushedBeforeReset {
                flushedBeforeReset = true
                if suspensions.holdUntilClientLeaves(connection, socket: socket) {
                    held = true
                    return 0
                }
            }
            return cutShort()
        }
    }

    /// Sends the client a RST now. Linger 0 and `shutdown(SHUT_RD)`, as a network profile's
    /// reset does, leave the RST to libmicrohttpd's close of the socket, which after an error
    /// end in the idle handler waited for another event on the connection: measured, 5 streams
    /// of 30 (after a delay) held open until the head deadline closed them with a FIN. On Linux
    /// a TCP socket is also disconnected (`connect` to `AF_UNSPEC`), which sends the RST at once
    /// (`tcp_disconnect`) and leaves the descriptor to libmicrohttpd, closed (docs/streams.md).
    private func resetNow() {
        _ = SocketDrain.breakConnection(socket, closes: false)
    }

    /// The network profile's reset after `resetAt` bytes of the stream: once the client has
    /// taken them (held 5 ms at a time, `SocketDrain`), a RST.
    private func resetByNetwork(at resetAt: Int) -> Int {
        if drain.shouldWait(for: resetAt), suspensions.hold(connection, milliseconds: SocketDrain.stepMilliseconds) { return 0 }
        progress.end(.reset)
        resetNow()
        return StreamedBody.endWithError
    }

    /// Ends the stream without its last chunk: the client left, or the server is stopping.
    private func cutShort() -> Int {
        progress.end(.cut)
        Socket.shutDown(socket)
        return StreamedBody.endWithError
    }
}

/// What a stream of events has sent so far, shared between the stream (libmicrohttpd's thread)
/// and whoever reads it when the request is done.
public final class EventStreamProgress: Sendable {
    /// How a stream ended when it did not end cleanly after its last event.
    public enum Ending: String, Sendable {
        case close, reset, stall
        /// The client left, or the server stopped, before the stream was over.
        case cut
    }

    /// The events sent, the last `id:` and `retry:` among them (what the client should send
    /// back and wait), and how the stream ended when it did not end cleanly.
    public struct Snapshot: Sendable {
        public var events = 0
        public var lastID: String?
        public var retryMilliseconds: Int?
        public var ending: Ending?
    }

    private let state = Mutex(Snapshot())
    /// Told what was sent once libmicrohttpd lets go of the stream (the request is over).
    private let whenReleased: (@Sendable (Snapshot) -> Void)?
    /// Told what was sent so far after each event (on libmicrohttpd's thread).
    private let whenSent: (@Sendable (Snapshot) -> Void)?

    public init(whenReleased: (@Sendable (Snapshot) -> Void)? = nil, whenSent: (@Sendable (Snapshot) -> Void)? = nil) {
        self.whenReleased = whenReleased
        self.whenSent = whenSent
    }

    func released() {
        whenReleased?(snapshot)
    }

    func sent(_ event: EventStreamPlan.Event) {
        let now = state.withLock { state in
            state.events += 1
            if let id = event.id { state.lastID = id }
            if let retry = event.retryMilliseconds { state.retryMilliseconds = retry }
            return state
        }
        whenSent?(now)
    }

    func end(_ how: Ending) {
        state.withLock { state in
            if state.ending == nil { state.ending = how }
        }
    }

    public var snapshot: Snapshot { state.withLock { $0 } }
}

func readEventStream(_ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int {
    guard let cls, let buffer else { return StreamedBody.endWithError }
    let body = Unmanaged<EventStreamBody>.fromOpaque(cls).takeUnretainedValue()
    return body.read(into: buffer, capacity: capacity)
}

func releaseEventStream(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<EventStreamBody>.fromOpaque(cls).release()
}
