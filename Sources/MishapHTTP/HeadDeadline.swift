import CMicroHTTPD
import CMicroHTTPDShim
import Dispatch
import Logging
import MishapSupport
import Synchronization

/// Guards the connection limit against slow senders (slowloris): a connection has `headTimeout`
/// to send a whole request head, however it trickles it, and at the limit the oldest
/// connections still sending a head are closed to keep `reserve` connections free for new
/// clients. libmicrohttpd 0.9.75 has neither: its idle timeout starts over with every byte
/// received, and past the limit new clients wait in the listen queue.
///
/// Every open connection is in a table, from libmicrohttpd's STARTED notification to its CLOSED
/// one (`handleConnectionNotice`). A connection is *awaiting a head* from when it is accepted,
/// and again from when each of its requests ends (keep-alive), until the access handler's first
/// call for the next request (the head has arrived). A sweeper thread looks at the table every
/// `sweepMilliseconds` and shuts down the sockets of connections awaiting a head for too long
/// (docs/libmicrohttpd.md, "Slow senders: the head deadline").
final class HeadDeadline: Sendable {
    /// How long a connection may await a head before it is closed.
    let headTimeout: Duration
    /// The server's connection limit.
    let connectionLimit: Int
    /// Connections kept free for new clients: a tenth of the limit, none below a limit of 10.
    let reserve: Int
    /// Where the sweeper tells what it closed (rate-limited: see `logInterval`).
    let logger: Logger

    /// How often the sweeper looks, in milliseconds: a deadline is enforced up to this late
    /// (twice this for a keep-alive connection, whose clock starts at the first sweep after its
    /// request ended).
    static let sweepMilliseconds = 250
    /// Connections awaiting a head for less than this are never closed to make room.
    static let minimumAgeToEvict: Duration = .seconds(1)
    /// The sweeper logs what it closed at most this often.
    static let logInterval: Duration = .seconds(10)

    private let table = Mutex<[UInt: WatchedConnection]>([:])
    private let stopping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let sweeper = Mutex<OwnThread?>(nil)

    init(headTimeoutSeconds: Int, connectionLimit: Int, logger: Logger) {
        headTimeout = .seconds(headTimeoutSeconds)
        self.connectionLimit = connectionLimit
        reserve = connectionLimit >= 10 ? connectionLimit / 10 : 0
        self.logger = logger
    }

    // MARK: Called by libmicrohttpd's threads

    /// A connection was accepted: it is watched from now on. Returns its socket context.
    func opened(_ connection: OpaquePointer) -> UnsafeMutableRawPointer {
        let watched = WatchedConnection(socket: mishap_connection_fd(connection), since: .now)
        table.withLock { $0[Self.key(connection)] = watched }
        return Unmanaged.passUnretained(watched).toOpaque()
    }

    /// A connection is about to be closed (before libmicrohttpd closes its socket): it is no
    /// longer watched, and from here on its socket is never touched.
    func closed(_ connection: OpaquePointer) {
        _ = table.withLock { $0.removeValue(forKey: Self.key(connection)) }
    }

    /// The access handler's first call for a request (its head has arrived), or the end of a
    /// request: the connection switches between awaiting a head and not. One atomic add; the
    /// sweeper notices.
    static func advance(_ connection: OpaquePointer) {
        guard let context = mishap_connection_socket_context(connection) else { return }
        _ = Unmanaged<WatchedConnection>.fromOpaque(context)._withUnsafeGuaranteedRef {
            $0.phase.wrappingAdd(1, ordering: .relaxed)
        }
    }

    private static func key(_ connection: OpaquePointer) -> UInt {
        UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
    }

    // MARK: The sweeper

    /// Starts the sweeper thread (once the daemon runs).
    func start() {
        stopping.store(false, ordering: .relaxed)
        let thread = OwnThread { [self] in
            var tally = Tally()
            while wake.wait(timeout: .now() + .milliseconds(Self.sweepMilliseconds)) == .timedOut, !stopping.load(ordering: .relaxed) {
                sweep(&tally)
            }
        }
        if thread == nil {
            logger.warning("no thread for the head deadline: connections slow to send a request head are closed only by the idle timeout")
        }
        sweeper.withLock { $0 = thread }
    }

    /// Stops the sweeper thread and waits for it (once the daemon has stopped).
    func stop() {
        guard let thread = sweeper.withLock({ state -> OwnThread? in
            defer { state = nil }
            return state
        }) else { return }
        stopping.store(true, ordering: .relaxed)
        wake.signal()
        thread.join()
    }

    /// What the sweeper closed since it last logged.
    struct Tally {
        var timedOut = 0
        var evicted = 0
        var lastLogged: ContinuousClock.Instant?
    }

    /// One look at every connection: closes those awaiting a head past the deadline, then, when
    /// fewer than `reserve` connections are free, the oldest awaiting one (of at least
    /// `minimumAgeToEvict`) until `reserve` are.
    func sweep(_ tally: inout Tally) {
        let now = ContinuousClock.now
        let (open, timedOut, evicted) = table.withLock { connections -> (Int, Int, Int) in
            var open = 0, timedOut = 0
            var awaiting: [WatchedConnection] = []
            for watched in connections.values where !watched.closing {
                let phase = watched.phase.load(ordering: .relaxed)
                if phase != watched.seenPhase {
                    watched.seenPhase = phase
                    watched.since = now
                }
                open += 1
                // An odd phase: the head has arrived and the request is being handled.
                guard phase & 1 == 0 else { continue }
                let waited = now - watched.since
                if waited >= headTimeout {
                    watched.shutDown()
                    timedOut += 1
                    open -= 1
                } else if waited >= Self.minimumAgeToEvict {
                    awaiting.append(watched)
                }
            }
            let excess = reserve > 0 ? open - (connectionLimit - reserve) : 0
            guard excess > 0 else { return (open, timedOut, 0) }
            awaiting.sort { $0.since < $1.since }
            let evicted = awaiting.prefix(excess)
            for watched in evicted { watched.shutDown() }
            return (open - evicted.count, timedOut, evicted.count)
        }
        tally.timedOut += timedOut
        tally.evicted += evicted
        guard tally.timedOut + tally.evicted > 0 else { return }
        if let last = tally.lastLogged, now - last < Self.logInterval { return }
        if tally.evicted > 0 {
            logger.info("connection limit nearly reached: closed \(tally.evicted) connections still sending a request head, oldest first, to keep \(reserve) of \(connectionLimit) free for new clients (\(open) open now)")
        }
        if tally.timedOut > 0 {
            logger.debug("closed \(tally.timedOut) connections that sent no whole request head within \(headTimeout)")
        }
        tally = Tally(lastLogged: now)
    }
}

/// One open connection, as the sweeper sees it.
final class WatchedConnection: @unchecked Sendable {
    /// The socket; libmicrohttpd closes it only after its CLOSED notification.
    let socket: Int32
    /// How many times the connection switched between awaiting a head and handling a request:
    /// even while awaiting a head. Added to by the connection's worker thread, read by the
    /// sweeper.
    let phase = Atomic<UInt32>(0)

    // The sweeper's view, under the table's lock.
    /// The phase the sweeper last saw.
    var seenPhase: UInt32 = 0
    /// When the current phase began (as first seen by the sweeper; the accept time for the first).
    var since: ContinuousClock.Instant
    /// Shut down: libmicrohttpd will close it.
    var closing = false

    init(socket: Int32, since: ContinuousClock.Instant) {
        self.socket = socket
        self.since = since
    }

    /// Shuts the socket down both ways: libmicrohttpd reads the end of the stream and closes the
    /// connection, unanswered. Only under the table's lock, so the CLOSED notification, which
    /// comes before libmicrohttpd closes the socket, cannot have run: the descriptor is still
    /// this connection's.
    func shutDown() {
        closing = true
        Socket.shutDown(socket)
    }
}

/// libmicrohttpd's connection notification (`MHD_OPTION_NOTIFY_CONNECTION`), on the
/// connection's worker thread: STARTED once accepted, CLOSED before its socket is closed.
func handleConnectionNotice(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ code: MHD_ConnectionNotificationCode
) {
    guard let cls, let connection, let socketContext else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    guard let headDeadline = server.headDeadline else { return }
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        socketContext.pointee = headDeadline.opened(connection)
    case .CONNECTION_NOTIFY_CLOSED:
        headDeadline.closed(connection)
        socketContext.pointee = nil
    @unknown default:
        break
    }
}
